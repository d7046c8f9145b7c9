import { createHash } from 'node:crypto'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import t from 'tap'
import { parseRange, rangeKey, RangeClient } from '../../lib/password/breached-passwords.js'
import { downRangeUrl, startRangeServer } from '../helpers/range-server.js'

const BREACHED = 'a password the whole world has seen'
const CLEAN = 'a passphrase nobody has ever leaked'
// Two passwords whose SHA-1 share the prefix 8B7D4.
const TWIN_A = 'twin passphrase number 1062'
const TWIN_B = 'twin passphrase number 1232'

const client = (rangeUrl: string, settings: Partial<ConstructorParameters<typeof RangeClient>[0]> = {}) =>
  new RangeClient({ rangeUrl, timeoutMs: 1500, cacheTtlMs: 86_400_000, cacheBytes: 32 * 1024 ** 2, ...settings })

t.test('only the 5-character upper-case prefix of the SHA-1 leaves, with Add-Padding: true', async (t) => {
  const range = await startRangeServer(t)
  range.breach(BREACHED)
  const verdict = await client(range.url).lookup(BREACHED)
  t.same(verdict, { outcome: 'breached' })
  const hash = createHash('sha1').update(BREACHED).digest('hex').toUpperCase()
  t.equal(range.requests.length, 1)
  t.equal(range.requests[0]!.path, hash.slice(0, 5), 'the path is the prefix and nothing else')
  t.match(range.requests[0]!.path, /^[0-9A-F]{5}$/)
  t.equal(range.requests[0]!.headers['add-padding'], 'true')
  const sent = JSON.stringify(range.requests[0])
  t.notOk(sent.includes(hash.slice(5, 12)), 'no part of the suffix is sent')
  t.notOk(sent.includes(BREACHED), 'nor the password')
  t.same(rangeKey(BREACHED), { prefix: hash.slice(0, 5), suffix: hash.slice(5) })
})

t.test('a suffix with a count above 0 is breached; a padded line (count 0) and an absent suffix are not', async (t) => {
  const range = await startRangeServer(t)
  range.breach(BREACHED)
  range.pad(CLEAN)
  const lookups = client(range.url)
  t.same(await lookups.lookup(BREACHED), { outcome: 'breached' })
  t.same(await lookups.lookup(CLEAN), { outcome: 'clean' }, 'its suffix came back with 0: padding')
  t.same(await lookups.lookup('yet another passphrase of nobody'), { outcome: 'clean' })
})

t.test('the parser: SUFFIX:COUNT lines with CRLF or LF, lower case accepted; anything else is garbage', async (t) => {
  const suffix = 'A'.repeat(35)
  t.ok(parseRange(`${suffix}:3\r\n${'B'.repeat(35)}:0\r\n`).has(suffix))
  t.notOk(parseRange(`${suffix}:0\n`).has(suffix))
  t.ok(parseRange(`${suffix.toLowerCase()}:1`).has(suffix))
  for (const garbage of ['', '\r\n', '<html></html>', `${suffix}`, `${suffix}:x`, `${suffix}1:1`, `${'G'.repeat(35)}:1`, `${suffix}:1\nnot a line`]) {
    t.throws(() => parseRange(garbage), { message: 'garbage' }, JSON.stringify(garbage.slice(0, 20)))
  }
})

t.test('answers are cached by prefix, never by password: another password of the same prefix asks nothing', async (t) => {
  const range = await startRangeServer(t)
  range.breach(TWIN_B)
  t.equal(rangeKey(TWIN_A).prefix, rangeKey(TWIN_B).prefix)
  const lookups = client(range.url)
  t.same(await lookups.lookup(TWIN_A), { outcome: 'clean' })
  t.same(await lookups.lookup(TWIN_B), { outcome: 'breached' }, 'answered from the prefix\'s cached answer')
  t.same(await lookups.lookup(TWIN_A), { outcome: 'clean' })
  t.equal(range.requests.length, 1)
})

t.test('the cache: entries live cacheTtl, at most cacheBytes of answers (oldest out), none with 0; concurrent lookups share one request', async (t) => {
  const range = await startRangeServer(t)
  let now = 1_000_000
  // Each answer here holds one breached suffix: 18 bytes and the entry's 256. Two fit in 600 bytes, three do not.
  const lookups = client(range.url, { cacheTtlMs: 1000, cacheBytes: 600, now: () => now })
  await lookups.lookup(BREACHED)
  now += 999
  await lookups.lookup(BREACHED)
  t.equal(range.requests.length, 1, 'still fresh')
  now += 1
  await lookups.lookup(BREACHED)
  t.equal(range.requests.length, 2, 'expired after 1 s')

  await lookups.lookup(CLEAN)
  await lookups.lookup(TWIN_A)
  t.equal(range.requests.length, 4)
  await lookups.lookup(BREACHED)
  t.equal(range.requests.length, 5, 'the oldest prefix was dropped for the third')
  await lookups.lookup(TWIN_A)
  t.equal(range.requests.length, 5, 'the newest stayed')

  t.equal(lookups.cachedBytes, 2 * (18 + 256))

  const uncached = client(range.url, { cacheBytes: 0 })
  await uncached.lookup(BREACHED)
  await uncached.lookup(BREACHED)
  t.equal(range.requests.length, 7, 'cacheBytes 0 keeps nothing')
  t.equal(uncached.cachedBytes, 0)

  range.mode = 'slow'
  range.delayMs = 100
  const shared = client(range.url)
  const verdicts = await Promise.all(Array.from({ length: 10 }, async () => await shared.lookup(CLEAN)))
  t.same(new Set(verdicts.map((verdict) => verdict.outcome)), new Set(['clean']))
  t.equal(range.requests.length, 8, 'ten lookups of one prefix, one request')
})

t.test('a service that hangs, stalls in the body, fails, answers garbage, 503, empty or huge: unavailable, within the timeout, never a throw', async (t) => {
  const range = await startRangeServer(t)
  for (const [mode, reason] of [['hang', 'timeout'], ['stall', 'timeout'], ['garbage', 'garbage'], ['status', 'status'], ['empty', 'garbage'], ['huge', 'garbage']] as const) {
    range.mode = mode
    const started = performance.now()
    // A failure that is not a timeout must show as itself: a long timeout, so a busy machine's slow read of a
    // megabyte does not turn it into one.
    const timeoutMs = reason === 'timeout' ? 300 : 5000
    const verdict = await client(range.url, { timeoutMs }).lookup(BREACHED)
    const elapsed = performance.now() - started
    t.same(verdict, { outcome: 'unavailable', reason }, mode)
    t.ok(elapsed < (reason === 'timeout' ? 1000 : 2000), `${mode}: ${elapsed.toFixed(0)} ms`)
    if (reason === 'timeout') t.ok(elapsed >= 290, `${mode}: waited for the timeout`)
  }
  range.mode = 'ok'
  const lookups = client(range.url, { timeoutMs: 300 })
  range.mode = 'garbage'
  await lookups.lookup(BREACHED)
  range.mode = 'ok'
  range.breach(BREACHED)
  t.same(await lookups.lookup(BREACHED), { outcome: 'breached' }, 'a failure is not cached')

  t.same(await client(await downRangeUrl()).lookup(BREACHED), { outcome: 'unavailable', reason: 'error' }, 'nothing listening')
  t.same(await client('http://127.0.0.1:1/range/').lookup(BREACHED), { outcome: 'unavailable', reason: 'error' })
})

t.test('while the service hangs, lookups beyond 64 in flight are unavailable at once (busy) instead of holding more sockets', async (t) => {
  const range = await startRangeServer(t)
  range.mode = 'hang'
  const lookups = client(range.url, { timeoutMs: 1000 })
  const waiting = Array.from({ length: 64 }, async (_, i) => await lookups.lookup(`passphrase number ${i} of the hanging set`))
  // Sixty-four distinct prefixes are in flight (a few may share one: then some room is left).
  const extra = await Promise.all(Array.from({ length: 8 }, async (_, i) => await lookups.lookup(`one more passphrase, number ${i}`)))
  const outcomes = await Promise.all(waiting)
  t.ok(extra.some((verdict) => verdict.outcome === 'unavailable' && verdict.reason === 'busy'), 'some extra lookups were refused at once')
  t.ok(outcomes.every((verdict) => verdict.outcome === 'unavailable' && verdict.reason === 'timeout'), 'the others timed out')
  t.ok(range.requests.length <= 64, `${range.requests.length} requests`)
})

t.test('lookups of new passwords never take a current password\'s place: with 64 new ones in flight, a current one is answered', async (t) => {
  const range = await startRangeServer(t)
  range.breach(BREACHED)
  range.mode = 'slow'
  range.delayMs = 400
  // A timeout far above the service's 400 ms: on a busy machine, only a missing place may fail the lookup.
  const lookups = client(range.url, { timeoutMs: 5000 })
  const strangers = Array.from({ length: 70 }, async (_, i) => await lookups.lookup(`a stranger's new passphrase number ${i}`, 'new'))
  await sleep(100)
  t.same(await lookups.lookup('one more stranger\'s passphrase', 'new'), { outcome: 'unavailable', reason: 'busy' }, 'the new passwords\' places are taken')
  t.same(await lookups.lookup(BREACHED, 'current'), { outcome: 'breached' }, 'the current password\'s lookup had a place of its own')
  t.ok((await Promise.all(strangers)).filter((verdict) => verdict.outcome === 'clean').length >= 64)
})

t.test('a current password\'s lookup waits for its turn, up to timeoutMs, when 64 of them are in flight', async (t) => {
  const range = await startRangeServer(t)
  range.breach(BREACHED)
  range.mode = 'slow'
  range.delayMs = 300
  const lookups = client(range.url, { timeoutMs: 5000 })
  const ahead = Array.from({ length: 64 }, async (_, i) => await lookups.lookup(`a verified passphrase number ${i}`, 'current'))
  await sleep(50)
  const started = performance.now()
  const waited = await lookups.lookup(BREACHED, 'current')
  const elapsed = performance.now() - started
  t.same(waited, { outcome: 'breached' }, 'answered once a place came free')
  t.ok(elapsed >= 450, `it waited for its turn, then for its answer (${elapsed.toFixed(0)} ms)`)
  await Promise.all(ahead)

  // A service that hangs: the turn never comes, and the lookup gives up within its timeout.
  range.mode = 'hang'
  const hung = client(range.url, { timeoutMs: 400 })
  const stuck = Array.from({ length: 64 }, async (_, i) => await hung.lookup(`another verified passphrase number ${i}`, 'current'))
  await sleep(50)
  const since = performance.now()
  t.match(await hung.lookup(BREACHED, 'current'), { outcome: 'unavailable', reason: /^(busy|timeout)$/ })
  const gaveUp = performance.now() - since
  t.ok(gaveUp >= 300 && gaveUp < 1000, `gave up within its timeout (${gaveUp.toFixed(0)} ms)`)
  t.ok((await Promise.all(stuck)).every((verdict) => verdict.outcome === 'unavailable' && verdict.reason === 'timeout'))
})

t.test('the cache is bounded in bytes whatever the service answers: about 1 MiB a prefix keeps the heap within cacheBytes', async (t) => {
  const gc = collector()
  const range = await startRangeServer(t)
  range.mode = 'large'
  // Each answer keeps 26,000 suffixes of 18 bytes: four fit in 2 MiB.
  const cacheBytes = 2 * 1024 ** 2
  let lookups: RangeClient | undefined = client(range.url, { cacheBytes, timeoutMs: 30_000 })
  for (let i = 0; i < 10; i++) t.equal((await lookups.lookup(`passphrase of a large answer ${i}`)).outcome, 'clean')
  t.equal(range.requests.length, 10)
  t.equal(lookups.cachedBytes, 4 * (26_000 * 18 + 256), 'the newest four answers are counted')
  range.mode = 'ok'
  await lookups.lookup('passphrase of a large answer 9')
  t.equal(range.requests.length, 10, 'the newest answer is kept')
  await lookups.lookup('passphrase of a large answer 0')
  t.equal(range.requests.length, 11, 'the oldest went')

  // What the client holds: the process's memory with it, less the memory without it.
  const held = retained(gc)
  lookups = undefined
  const kept = held - retained(gc)
  t.ok(kept < cacheBytes * 1.25, `the client kept ${(kept / 1024 ** 2).toFixed(2)} MiB after 10 answers of 1 MiB`)
})

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

/** Node's gc(), without starting the process with --expose-gc. */
function collector (): () => void {
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc') as () => void
}

/** What the process keeps, its heap and its buffers, after full collections. */
function retained (gc: () => void): number {
  for (let i = 0; i < 3; i++) gc()
  const { heapUsed, external } = process.memoryUsage()
  return heapUsed + external
}
