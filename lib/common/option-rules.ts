import { invalidOption } from './errors.js'

export function assert (condition: unknown, message: string): asserts condition {
  if (!condition) throw invalidOption(message)
}

export function isInteger (value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): value is number {
  return Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max
}

export function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Edit distance, case-insensitive, so `expiresin` finds `expiresIn`. */
function distance (a: string, b: string): number {
  a = a.toLowerCase()
  b = b.toLowerCase()
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

/** How far a known name is from a misspelt one: a name it contains (`idle` in `idleTimeout`) is nearest. */
function score (name: string, candidate: string): number {
  return candidate.toLowerCase().includes(name.toLowerCase()) ? 0 : distance(name, candidate)
}

/** The known name closest to a misspelt one. */
export function nearest (name: string, known: readonly string[]): string {
  return known.reduce((best, candidate) => score(name, candidate) < score(name, best) ? candidate : best)
}

/** `a`, `a or b`, `a, b or c`. */
const either = (names: readonly string[]): string => names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} or ${names.at(-1)!}`

/**
 * Fails on any key of `value` not in `known`, naming the nearest known key: a misspelt option must not be ignored.
 * `members`: the keys of the groups inside `value`; one of them written here is pointed to its group (`mfa.trustDays`).
 */
export function checkKnownKeys (value: Record<string, unknown>, known: readonly string[], where: string, members: Readonly<Record<string, readonly string[]>> = {}): void {
  const prefix = where === '' ? '' : `${where}.`
  for (const name of Object.keys(value)) {
    if (known.includes(name)) continue
    const inGroups = Object.entries(members).flatMap(([group, keys]) => keys.filter((key) => key.toLowerCase() === name.toLowerCase()).map((key) => `${prefix}${group}.${key}`))
    throw invalidOption(`unknown option ${prefix}${name}: did you mean ${inGroups.length > 0 ? either(inGroups) : `${prefix}${nearest(name, known)}`}?`)
  }
}

/** The plugin's name: the default issuer, audience, realm and key prefix. */
export const PLUGIN_NAME = 'fastify-password-auth'

/** An optional group of options: absent is {}, anything but an object is a mistake, unknown keys too. */
export function group<T> (value: T | undefined, known: readonly string[], where: string): T {
  if (value === undefined) return {} as T
  assert(isObject(value), `${where} must be an object`)
  checkKnownKeys(value, known, where)
  return value
}

export function checkHeaderText (value: unknown, name: string): asserts value is string {
  assert(typeof value === 'string' && /^[\x21\x23-\x5b\x5d-\x7e ]+$/.test(value),
    `${name} must be a non-empty string of printable ASCII without " or \\`)
}

export function checkPath (value: unknown, name: string, allowEmpty: boolean): asserts value is string {
  assert(typeof value === 'string' && ((allowEmpty && value === '') || /^\/[^\s?#]*[^/\s?#]$/.test(value)),
    `${name} must be ${allowEmpty ? 'empty or ' : ''}a path starting with / and not ending with /`)
}
