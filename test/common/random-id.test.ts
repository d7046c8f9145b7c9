import t from 'tap'
import { randomId } from '../../lib/common/random-id.js'

// The pooled ids of sessions, access tokens and devices: 16 random bytes each, never handed out twice,
// across several refills of the pool (256 ids each).
t.test('every id is 16 bytes in base64url, and none repeats across refills', async (t) => {
  const ids = Array.from({ length: 256 * 4 + 3 }, () => randomId())
  for (const id of ids) {
    if (!/^[\w-]{22}$/.test(id) || Buffer.from(id, 'base64url').length !== 16) t.fail(`not 16 bytes in base64url: ${id}`)
  }
  t.equal(new Set(ids).size, ids.length, 'all distinct')
  // The bytes look random: each of the 128 bit positions is set in about half the ids.
  const ones = new Array<number>(128).fill(0)
  for (const id of ids) {
    const bytes = Buffer.from(id, 'base64url')
    for (let bit = 0; bit < 128; bit++) ones[bit]! += (bytes[bit >> 3]! >> (bit & 7)) & 1
  }
  const share = (n: number): number => n / ids.length
  t.ok(ones.every((n) => share(n) > 0.35 && share(n) < 0.65), 'no bit stuck')
})
