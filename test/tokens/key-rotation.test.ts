import { generateKeyPairSync } from 'node:crypto'
import Fastify from 'fastify'
import t from 'tap'
import passwordAuth, { MemoryAccountStore, MemorySessionStore, type JwtKey, type PasswordAuthOptions } from '../../lib/index.js'
import { buildTestApp, decodeJwt, PLUGIN_TIMEOUT_MS, type TestApp } from '../helpers/app.js'

const OLD = 'the-old-signing-secret-of-32-bytes-or-more'
const NEW = 'the-new-signing-secret-of-32-bytes-or-more'

/** A second instance over the same accounts and sessions, with other keys: a deployment after a key change. */
async function redeploy (t: Parameters<typeof buildTestApp>[0], from: TestApp, keys: JwtKey[]): Promise<TestApp> {
  const next = await buildTestApp(t, { auth: { accounts: from.accounts, sessions: from.sessions, jwt: { keys } } })
  return next
}

t.test('rotating the signing key ends no session: old tokens verify by their kid, new ones are signed with the new key', async (t) => {
  const before = await buildTestApp(t, { auth: { jwt: { secret: OLD } } })
  const login = await before.tokens()
  const after = await redeploy(t, before, [{ secret: NEW }, { secret: OLD }])
  t.equal((await after.me(login.accessToken)).statusCode, 200, 'an access token signed with the previous key')
  const refreshed = await after.refresh(login.refreshToken)
  t.equal(refreshed.statusCode, 200, 'a refresh token made with the previous key')
  const { accessToken, refreshToken } = refreshed.json()
  t.not(decodeJwt(accessToken).header.kid, decodeJwt(login.accessToken).header.kid, 'signed with the new key')
  t.equal((await after.me(accessToken)).statusCode, 200)

  const rolledBack = await redeploy(t, before, [{ secret: OLD }])
  t.equal((await rolledBack.me(accessToken)).statusCode, 401, 'a token whose kid names a key no longer configured')
  t.equal((await rolledBack.refresh(refreshToken)).statusCode, 401, 'a refresh token made with a key no longer configured')

  const done = await redeploy(t, before, [{ secret: NEW }])
  t.equal((await done.me(login.accessToken)).statusCode, 401, 'the previous key removed: its tokens are invalid')
  t.equal((await done.me(accessToken)).statusCode, 200)
  t.equal((await done.refresh(refreshToken)).statusCode, 200, 'sessions rolled over to the new key keep working')
})

t.test('a grace answer repeats the very token the first refresh made, even across a key change', async (t) => {
  const before = await buildTestApp(t, { auth: { jwt: { keys: [{ secret: OLD }, { secret: NEW }] } } })
  const login = await before.tokens()
  const first = (await before.refresh(login.refreshToken)).json()
  const after = await redeploy(t, before, [{ secret: NEW }, { secret: OLD }])
  t.equal((await after.refresh(login.refreshToken)).json().refreshToken, first.refreshToken)
})

t.test('kids are explicit or derived from the key; a kid names one key', async (t) => {
  const named = await buildTestApp(t, { auth: { jwt: { keys: [{ kid: '2026-11', secret: NEW }] } } })
  t.equal(decodeJwt(await named.token()).header.kid, '2026-11')
  const derivedA = await buildTestApp(t, { auth: { jwt: { secret: NEW } } })
  const derivedB = await buildTestApp(t, { auth: { jwt: { keys: [{ secret: Buffer.from(NEW) }] } } })
  t.equal(decodeJwt(await derivedA.token()).header.kid, decodeJwt(await derivedB.token()).header.kid, 'the same secret gets the same kid everywhere')
  const app = Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS })
  t.teardown(async () => { await app.close() })
  const options = (jwt: PasswordAuthOptions['jwt']): PasswordAuthOptions => ({ accounts: new MemoryAccountStore(), jwt })
  for (const [jwt, message] of [
    [{ keys: [{ kid: 'a', secret: NEW }, { kid: 'a', secret: OLD }] }, /jwt\.keys\[1\]: kid "a" names two keys/],
    [{ keys: [{ secret: NEW }, { secret: NEW }] }, /names two keys/],
    [{ keys: [] }, /jwt\.keys must be a non-empty array/],
    [{ keys: [{ secret: NEW }], secret: OLD }, /jwt\.keys replaces jwt\.secret/],
    [{ keys: [{ kid: 'a b', secret: NEW }] }, /jwt\.keys\[0\]\.kid must be 1 to 64 letters/],
    [{ keys: [{ secret: NEW, expiresIn: 5 }] }, /jwt\.keys\[0\] has an unknown field "expiresIn"/]
  ] as Array<[PasswordAuthOptions['jwt'], RegExp]>) {
    await t.rejects(async () => { await Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS }).register(passwordAuth, options(jwt)) }, { code: 'FST_PWAUTH_INVALID_OPTION', message }, String(message))
  }
})

t.test('key pairs rotate too; a previous key pair may be given by its public key alone', async (t) => {
  const old = generateKeyPairSync('ed25519')
  const next = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const before = await buildTestApp(t, { auth: { jwt: { algorithm: 'EdDSA', privateKey: old.privateKey, publicKey: old.publicKey } } })
  const login = await before.tokens()
  const after = await redeploy(t, before, [
    { algorithm: 'ES256', privateKey: next.privateKey.export({ type: 'pkcs8', format: 'pem' }) },
    { algorithm: 'EdDSA', publicKey: old.publicKey.export({ type: 'spki', format: 'der' }) }
  ])
  t.equal((await after.me(login.accessToken)).statusCode, 200, 'verified with the previous public key')
  t.equal(decodeJwt(await after.token()).header.alg, 'ES256')
  t.equal((await after.refresh(login.refreshToken)).statusCode, 401,
    'a refresh token is authenticated with a key derived from the private key: without it the session must log in again')
})

t.test('the signing key needs its private key; keys of the wrong type are refused', async (t) => {
  const ed = generateKeyPairSync('ed25519')
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const other = generateKeyPairSync('ed25519')
  for (const [key, message] of [
    [{ algorithm: 'EdDSA', publicKey: ed.publicKey }, /jwt\.keys\[0\] signs tokens, so it needs its privateKey/],
    [{ algorithm: 'EdDSA', privateKey: rsa.privateKey }, /EdDSA needs an Ed25519 key pair/],
    [{ algorithm: 'ES256', privateKey: ed.privateKey }, /ES256 needs a P-256 key pair/],
    [{ algorithm: 'EdDSA', privateKey: ed.privateKey, publicKey: other.publicKey }, /privateKey and publicKey are not one pair/]
  ] as Array<[JwtKey, RegExp]>) {
    await t.rejects(async () => { await Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS }).register(passwordAuth, { accounts: new MemoryAccountStore(), jwt: { keys: [key] } }) },
      { code: 'FST_PWAUTH_INVALID_OPTION', message })
  }
})

t.test('the public keys can be published as a JWKS document (off by default)', async (t) => {
  const current = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const previous = generateKeyPairSync('ed25519')
  const { app, token } = await buildTestApp(t, {
    auth: {
      jwt: {
        keys: [{ algorithm: 'ES256', privateKey: current.privateKey }, { algorithm: 'EdDSA', publicKey: previous.publicKey }, { secret: OLD }],
        jwksPath: '/.well-known/jwks.json'
      }
    }
  })
  const response = await app.inject({ url: '/.well-known/jwks.json' })
  t.equal(response.statusCode, 200)
  t.equal(response.headers['content-type'], 'application/jwk-set+json; charset=utf-8')
  const { keys } = response.json()
  t.equal(keys.length, 2, 'the HS256 secret is never published')
  t.match(keys[0], { kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: decodeJwt(await token()).header.kid, x: String, y: String })
  t.notOk('d' in keys[0], 'no private part')
  const careless = await buildTestApp(t, { auth: { jwt: { algorithm: 'ES256', privateKey: current.privateKey, publicKey: current.privateKey, jwksPath: '/jwks' } } })
  t.notOk('d' in (await careless.app.inject({ url: '/jwks' })).json().keys[0], 'not even when a private KeyObject is given as the public key')
  t.match(keys[1], { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' })

  const plain = await buildTestApp(t)
  t.equal((await plain.app.inject({ url: '/.well-known/jwks.json' })).statusCode, 404)
  await t.rejects(async () => {
    await Fastify({ pluginTimeout: PLUGIN_TIMEOUT_MS }).register(passwordAuth, { accounts: new MemoryAccountStore(), sessions: new MemorySessionStore(), jwt: { secret: NEW, jwksPath: '/jwks.json' } })
  }, { code: 'FST_PWAUTH_INVALID_OPTION', message: /HS256 secrets have none/ })
})
