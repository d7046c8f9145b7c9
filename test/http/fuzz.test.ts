import t from 'tap'
import { buildTestApp, EMAIL, PASSWORD } from '../helpers/app.js'

/** mulberry32: a small seeded generator, so any failure reproduces with the printed seed. */
function generator (seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6D2B79F5) >>> 0
    let x = Math.imul(state ^ (state >>> 15), 1 | state)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

const SEED = Number(process.env.FUZZ_SEED ?? 20261122)
const random = generator(SEED)
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
const PIECES = ['a', '@', ' ', '\u0000', '\u00e9', 'e\u0301', '\uD800', '\uDC00', '\uD83D\uDE00', '"', '\\', '{', '.', '\n', 'ß', '\u202e', '\uFEFF', 'A']

function randomString (): string {
  const kind = random()
  if (kind < 0.1) return ''
  if (kind < 0.2) return EMAIL
  if (kind < 0.3) return PASSWORD
  if (kind < 0.35) return 'x'.repeat(1020 + Math.floor(random() * 10))
  return Array.from({ length: Math.floor(random() * 40) }, () => pick(PIECES)).join('')
}

function randomValue (depth = 0): unknown {
  const kind = random()
  if (kind < 0.5 || depth > 2) return randomString()
  if (kind < 0.6) return pick([0, -1, 1e308, 123, Number.MAX_SAFE_INTEGER + 2, 0.5])
  if (kind < 0.7) return pick([true, false, null])
  if (kind < 0.85) return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(depth + 1))
  return randomObject(depth + 1)
}

function randomObject (depth = 0): Record<string, unknown> {
  const keys = ['email', 'password', 'currentPassword', 'newPassword', 'confirmNewPassword', 'constructor', 'extra', 'toString']
  const body: Record<string, unknown> = {}
  for (const key of keys) if (random() < 0.7) body[key] = randomValue(depth)
  return body
}

function randomPayload (): string {
  const kind = random()
  if (kind < 0.7) return JSON.stringify(randomObject())
  if (kind < 0.8) return JSON.stringify(randomValue())
  if (kind < 0.9) return JSON.stringify(randomObject()).slice(0, Math.floor(random() * 40))
  return randomString()
}

const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'application/x-www-form-urlencoded',
  'application/json; charset=latin1', 'application/jsonx', 'application/problem+json', 'multipart/form-data', '', 'garbage/', ';;;']

t.test(`no client input makes a 5xx (seed ${SEED})`, async (t) => {
  const { app, token } = await buildTestApp(t)
  const valid = await token()
  const spent = await token() // the Logout runs may revoke this one
  const statuses = new Map<number, number>()
  const check = (response: { statusCode: number, headers: Record<string, unknown> }, what: string): void => {
    statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1)
    if (response.statusCode >= 500) t.fail(`${response.statusCode} for ${what}`)
    if (response.statusCode >= 400) {
      if (response.headers['content-type'] !== 'application/problem+json; charset=utf-8') t.fail(`not problem+json for ${what}`)
    }
  }

  for (let i = 0; i < 400; i++) {
    const url = pick(['/Auth/Login', '/Auth/ChangePassword', '/Auth/Logout'])
    const contentType = pick(CONTENT_TYPES)
    const payload = randomPayload()
    const headers: Record<string, string> = contentType === '' ? {} : { 'content-type': contentType }
    if (url === '/Auth/Logout' && random() < 0.5) headers.authorization = `Bearer ${spent.slice(0, Math.floor(random() * spent.length))}${randomString()}`
    check(await app.inject({ method: 'POST', url, payload, headers }), `${url} ${contentType} ${JSON.stringify(payload).slice(0, 80)}`)
  }
  for (let i = 0; i < 200; i++) {
    const parts = Array.from({ length: Math.floor(random() * 5) }, () => Buffer.from(randomString()).toString('base64url'))
    const authorization = pick(['Bearer ', 'bearer ', 'Basic ', '', 'Bearer  ']) + pick([parts.join('.'), randomString(), `${valid}.${randomString()}`])
    const response = await app.inject({ method: 'GET', url: '/me', headers: { authorization } })
    check(response, `/me ${JSON.stringify(authorization).slice(0, 80)}`)
    if (response.statusCode === 200) t.fail(`a made-up token was accepted: ${authorization.slice(0, 80)}`)
  }
  t.ok([...statuses.keys()].every((status) => status < 500), `statuses ${JSON.stringify(Object.fromEntries(statuses))}`)
  t.equal((await app.inject({ url: '/me', headers: { authorization: `Bearer ${valid}` } })).statusCode, 200, 'the real token still works')
})
