/**
 * The lockout attack (contract §6, known devices), over real HTTP on 127.0.0.1: a stranger holds an
 * e-mail's block round after round while its owner logs in, once without and once with the device token
 * of an earlier login; then 200 parallel wrong guesses carrying that token. Blocks are scaled down to 1 s.
 */
import Fastify from 'fastify'
import passwordAuth, { hashPassword, MemoryAccountStore } from '../../lib/index.js'

const EMAIL = 'owner@example.com'
const PASSWORD = 'the owner knows this one'
const ARGON2 = { memoryCost: 1024, timeCost: 1, parallelism: 1 }

export interface LockoutResult {
  rounds: number
  /** The owner's right password, each round, while the stranger holds the block. */
  ownerWithoutDevice: { ok: number, throttled: number }
  ownerWithDevice: { ok: number, throttled: number }
  /** Wrong guesses the stranger got verified over all rounds. */
  strangerVerified: number
  parallelGuesses: { sent: number, verified: number, throttled: number }
}

export async function lockoutAttack (rounds = 5): Promise<LockoutResult> {
  const accounts = new MemoryAccountStore()
  accounts.add({ email: EMAIL, passwordHash: await hashPassword(PASSWORD, ARGON2) })
  const app = Fastify()
  await app.register(passwordAuth, {
    accounts, jwt: { secret: 'bench-lockout-secret-of-32-bytes-or-more' }, argon2: ARGON2, rateLimit: false, throttle: { blockSeconds: 1, maxBlockSeconds: 1 }
  })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  const login = async (password: string, deviceToken?: string): Promise<Response> => await fetch(`${url}/Auth/Login`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: EMAIL, password, deviceToken })
  })
  try {
    const { deviceToken } = await (await login(PASSWORD)).json() as { deviceToken: string }
    const result: LockoutResult = {
      rounds,
      ownerWithoutDevice: { ok: 0, throttled: 0 },
      ownerWithDevice: { ok: 0, throttled: 0 },
      strangerVerified: 0,
      parallelGuesses: { sent: 200, verified: 0, throttled: 0 }
    }
    const count = (tally: { ok: number, throttled: number }, status: number): void => {
      if (status === 200) tally.ok++
      if (status === 429) tally.throttled++
    }
    for (let round = 0; round < rounds; round++) {
      // The stranger: the free failures first, then the one guess each end of a block lets through.
      for (let i = 0; i < (round === 0 ? 5 : 1); i++) if ((await login('a stranger guessing')).status === 401) result.strangerVerified++
      count(result.ownerWithoutDevice, (await login(PASSWORD)).status)
      count(result.ownerWithDevice, (await login(PASSWORD, deviceToken)).status)
      await new Promise((resolve) => setTimeout(resolve, 1050))
    }
    const statuses = await Promise.all(Array.from({ length: 200 }, async () => (await login('wrong, in parallel', deviceToken)).status))
    result.parallelGuesses.verified = statuses.filter((status) => status === 401).length
    result.parallelGuesses.throttled = statuses.filter((status) => status === 429).length
    return result
  } finally {
    await app.close()
  }
}
