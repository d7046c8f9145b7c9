import t from 'tap'
import { VerifiedTokens } from '../../lib/tokens/access-tokens.js'

// The cache's bounds; that every cached token still meets its exp is also tested end to end in tokens.test.ts.
interface Claims { sub: string, exp: number, nbf?: number }

t.test('a verified token is found by its exact text, only within its lifetime', async (t) => {
  const cache = new VerifiedTokens<Claims>(10)
  const claims = { sub: 'ada', exp: 2000, nbf: 1000 }
  t.equal(cache.add('a.b.c', claims), claims)
  t.ok(Object.isFrozen(claims), 'hits share the claims, so they are frozen')
  t.equal(cache.get('a.b.c', 1_500_000), claims)
  t.equal(cache.get('a.b.c', 2_000_000), claims, 'exp itself is still valid, as fast-jwt has it')
  t.equal(cache.get('a.b.c', 2_000_001), undefined, 'expired')
  t.equal(cache.get('a.b.c', 999_999), undefined, 'not yet valid (nbf)')
  t.equal(cache.get('a.b.C', 1_500_000), undefined, 'another text is another token')
  t.equal(cache.get('a.B.c', 1_500_000), undefined, 'the same signature on another payload is another token too')
  t.equal(cache.get('c', 1_500_000), undefined, 'and so is the signature alone')
  cache.add('x.y.z', { sub: 'bob', exp: 2000 })
  t.equal(cache.get('x.y.z', 0)?.sub, 'bob', 'no nbf: valid from the start')
})

t.test('at most `size` tokens are held, the oldest leaving first; long tokens and size 0 are not cached', async (t) => {
  const cache = new VerifiedTokens<Claims>(2)
  for (const token of ['one', 'two', 'three']) cache.add(token, { sub: token, exp: 1 })
  t.equal(cache.get('one', 0), undefined)
  t.equal(cache.get('two', 0)?.sub, 'two')
  t.equal(cache.get('three', 0)?.sub, 'three')
  const long = 'x'.repeat(4097)
  cache.add(long, { sub: 'long', exp: 1 })
  t.equal(cache.get(long, 0), undefined)
  t.equal(cache.get('two', 0)?.sub, 'two', 'and pushes nothing out')
  // Found by their signature: two verified tokens sharing one (made up; real ones never do) hold one place.
  cache.add('a.b.sig', { sub: 'ada', exp: 1 })
  cache.add('x.y.sig', { sub: 'bob', exp: 1 })
  t.equal(cache.get('a.b.sig', 0), undefined)
  t.equal(cache.get('x.y.sig', 0)?.sub, 'bob')
  const off = new VerifiedTokens<Claims>(0)
  off.add('one', { sub: 'one', exp: 1 })
  t.equal(off.get('one', 0), undefined)
})

t.test('a token that ends like a verified one but differs before is not taken for it', async (t) => {
  const cache = new VerifiedTokens<Claims>(10)
  const signature = 'Q'.repeat(43)
  const verified = `header.${'a'.repeat(200)}.${signature}`
  cache.add(verified, { sub: 'ada', exp: 1 })
  t.equal(cache.get(verified, 0)?.sub, 'ada')
  t.equal(cache.get(`header.${'b'.repeat(200)}.${signature}`, 0), undefined, 'same signature, other claims: not a hit')
  t.equal(cache.get(`x${verified}`, 0), undefined, 'a prefix added: not a hit')
  t.equal(cache.get(verified.slice(1), 0), undefined, 'a character less: not a hit')
  const other = `header.${'b'.repeat(200)}.${signature}`
  cache.add(other, { sub: 'bob', exp: 1 })
  t.equal(cache.get(other, 0)?.sub, 'bob', 'a second verified token with the same tail takes the first one\'s place')
  t.equal(cache.get(verified, 0), undefined, 'and the first is verified again next time, never answered with the second\'s claims')
})
