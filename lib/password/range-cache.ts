/** The 35 hex characters of a suffix, with a 0 after them, as 18 bytes. */
export const SUFFIX_BYTES = 18
/**
 * What a cached prefix costs beyond its suffixes' bytes (its key, the Map entry, the objects around the bytes),
 * rounded up: an answer of padding alone still counts, so no range service can fill the heap with empty answers.
 */
const ENTRY_OVERHEAD_BYTES = 256

/**
 * The breached suffixes of one prefix, sorted and packed 18 bytes each into one buffer of their own (no pooled
 * slab shared with other buffers, so its bytes are what it keeps alive), searched by bisection. Padding lines
 * (count 0) are not in it: they are not breached.
 */
export class SuffixSet {
  readonly #packed: Buffer
  readonly #size: number

  /** `suffixes`: 35 upper-case hex characters each. */
  constructor (suffixes: string[]) {
    suffixes.sort()
    this.#size = suffixes.length
    this.#packed = Buffer.allocUnsafeSlow(suffixes.length * SUFFIX_BYTES)
    this.#packed.write(`${suffixes.join('0')}0`, 'hex')
  }

  /** What keeping it costs, in bytes: its suffixes and the entry around them. */
  get bytes (): number {
    return this.#packed.byteLength + ENTRY_OVERHEAD_BYTES
  }

  /** `suffix`: 35 upper-case hex characters. */
  has (suffix: string): boolean {
    const wanted = Buffer.from(`${suffix}0`, 'hex')
    let low = 0
    let high = this.#size - 1
    while (low <= high) {
      const middle = (low + high) >>> 1
      const order = this.#packed.compare(wanted, 0, SUFFIX_BYTES, middle * SUFFIX_BYTES, (middle + 1) * SUFFIX_BYTES)
      if (order === 0) return true
      if (order < 0) low = middle + 1
      else high = middle - 1
    }
    return false
  }
}

export interface RangeCacheSettings {
  /** The bytes of answers kept at most (SuffixSet.bytes summed); 0 keeps none. */
  maxBytes: number
  ttlMs: number
  now: () => number
}

/**
 * Range answers by prefix, each for `ttlMs`, at most `maxBytes` of them together: the oldest answer goes first,
 * and an answer larger than the whole cache is not kept. The bound holds whatever a range service answers.
 */
export class RangeCache {
  readonly #settings: RangeCacheSettings
  readonly #entries = new Map<string, { expiresAt: number, suffixes: SuffixSet }>()
  #bytes = 0

  constructor (settings: RangeCacheSettings) {
    this.#settings = settings
  }

  /** The bytes of the answers kept now. */
  get bytes (): number {
    return this.#bytes
  }

  get (prefix: string): SuffixSet | undefined {
    const entry = this.#entries.get(prefix)
    if (entry === undefined) return undefined
    if (entry.expiresAt > this.#settings.now()) return entry.suffixes
    this.#delete(prefix)
    return undefined
  }

  set (prefix: string, suffixes: SuffixSet): void {
    const { maxBytes, ttlMs, now } = this.#settings
    this.#delete(prefix)
    if (suffixes.bytes > maxBytes) return
    // A Map iterates in insertion order: the first key is the oldest answer.
    while (this.#bytes + suffixes.bytes > maxBytes) this.#delete(this.#entries.keys().next().value!)
    this.#entries.set(prefix, { expiresAt: now() + ttlMs, suffixes })
    this.#bytes += suffixes.bytes
  }

  #delete (prefix: string): void {
    const entry = this.#entries.get(prefix)
    if (entry === undefined) return
    this.#entries.delete(prefix)
    this.#bytes -= entry.suffixes.bytes
  }
}
