import { generateKeyPairSync, randomBytes } from 'node:crypto'
import t, { type Test } from 'tap'
import { secretKeyId } from '../../lib/tokens/keys.js'
import type { SessionStore } from '../../lib/index.js'
import { buildTestApp, decodeJwt, EMAIL, SECRET } from '../helpers/app.js'
import { forgeJwt, validClaims } from '../helpers/jwt.js'

const HEADER = { alg: 'HS256', typ: 'at+jwt', kid: secretKeyId(SECRET) }

/** A live session of the account, as Login would start it. */
async function liveSession (sessions: SessionStore, accountId: string): Promise<string> {
  const id = randomBytes(16).toString('base64url')
  await sessions.create({ id, accountId, credentialVersion: 0, keyId: HEADER.kid, ip: '', userAgent: '' }, { idleMs: 60_000, maxMs: 60_000, graceMs: 0 })
  return id
}

async function expectInvalid (t: Test, me: (token: string) => Promise<any>, token: string, name: string): Promise<void> {
  const response = await me(token)
  t.equal(response.statusCode, 401, name)
  t.equal(response.json().code, 'FST_PWAUTH_TOKEN_INVALID', name)
  t.equal(response.headers['www-authenticate'], 'Bearer realm="fastify-password-auth", error="invalid_token"', name)
}

t.test('a hand-made token with the right key and claims is accepted (the forging helper is sound)', async (t) => {
  const { me, ada, sessions } = await buildTestApp(t)
  const response = await me(forgeJwt(HEADER, validClaims(ada.id, await liveSession(sessions, ada.id)), SECRET))
  t.equal(response.statusCode, 200)
  t.equal(response.json().id, ada.id)
})

t.test('a header serialised in another order or spacing is read, if it holds exactly alg, typ and kid', async (t) => {
  const { me, ada, sessions } = await buildTestApp(t)
  const claims = validClaims(ada.id, await liveSession(sessions, ada.id))
  t.equal((await me(forgeJwt({ kid: HEADER.kid, typ: 'at+jwt', alg: 'HS256' }, claims, SECRET))).statusCode, 200)
})

t.test('forged and malformed tokens are invalid', async (t) => {
  const { me, ada, accounts, sessions } = await buildTestApp(t)
  const other = accounts.add({ email: 'other@example.com', passwordHash: ada.passwordHash })
  const claims = validClaims(ada.id, await liveSession(sessions, ada.id))
  const otherSession = await liveSession(sessions, other.id)
  const endedSession = await liveSession(sessions, ada.id)
  await sessions.end(endedSession, 'logout')
  const good = forgeJwt(HEADER, claims, SECRET)
  const [h, p, s] = good.split('.') as [string, string, string]
  const now = Math.floor(Date.now() / 1000)
  const { jti: _jti, ...noJti } = claims
  const { exp: _exp, ...noExp } = claims
  const { cv: _cv, ...noCv } = claims
  const { sub: _sub, ...noSub } = claims
  const { sid: _sid, ...noSid } = claims
  const { iss: _iss, ...noIss } = claims
  const { aud: _aud, ...noAud } = claims
  const { iss: _iss2, aud: _aud2, ...noIssNoAud } = claims
  const { kid: _kid, ...noKid } = HEADER

  const cases: Array<[string, string]> = [
    ['alg none, no signature', forgeJwt({ alg: 'none', typ: 'at+jwt' }, claims)],
    ['alg none with a signature', `${forgeJwt({ alg: 'none', typ: 'at+jwt' }, claims)}${s}`],
    ['tampered signature', `${h}.${p}.${s.slice(0, -4)}${s.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`],
    ['payload swapped to another account', `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: other.id })).toString('base64url')}.${s}`],
    ['no signature', `${h}.${p}.`],
    ['HS512 with the same secret', forgeJwt({ ...HEADER, alg: 'HS512' }, claims, SECRET)],
    ['another secret', forgeJwt(HEADER, claims, 'someone-elses-secret-of-32-bytes-or-more')],
    ['wrong issuer', forgeJwt(HEADER, { ...claims, iss: 'https://evil.example' }, SECRET)],
    ['wrong audience', forgeJwt(HEADER, { ...claims, aud: 'another-api' }, SECRET)],
    ['no issuer (RFC 9068 §4 requires it)', forgeJwt(HEADER, noIss, SECRET)],
    ['no audience', forgeJwt(HEADER, noAud, SECRET)],
    ['neither issuer nor audience', forgeJwt(HEADER, noIssNoAud, SECRET)],
    ['typ JWT', forgeJwt({ ...HEADER, typ: 'JWT' }, claims, SECRET)],
    ['no typ', forgeJwt({ alg: 'HS256' }, claims, SECRET)],
    ['expired', forgeJwt(HEADER, { ...claims, iat: now - 1000, exp: now - 1 }, SECRET)],
    ['not yet valid (nbf)', forgeJwt(HEADER, { ...claims, nbf: now + 600 }, SECRET)],
    ['no jti', forgeJwt(HEADER, noJti, SECRET)],
    ['empty jti', forgeJwt(HEADER, { ...claims, jti: '' }, SECRET)],
    ['no exp', forgeJwt(HEADER, noExp, SECRET)],
    ['no credential version', forgeJwt(HEADER, noCv, SECRET)],
    ['credential version as a string', forgeJwt(HEADER, { ...claims, cv: '0' }, SECRET)],
    ['stale credential version', forgeJwt(HEADER, { ...claims, cv: 1 }, SECRET)],
    ['no sub', forgeJwt(HEADER, noSub, SECRET)],
    ['sub of no account', forgeJwt(HEADER, { ...claims, sub: 'no-such-account' }, SECRET)],
    ['sub is the e-mail address', forgeJwt(HEADER, { ...claims, sub: EMAIL }, SECRET)],
    ['jku header', forgeJwt({ ...HEADER, jku: 'https://evil.example/jwks.json' }, claims, SECRET)],
    ['x5u header', forgeJwt({ ...HEADER, x5u: 'https://evil.example/cert.pem' }, claims, SECRET)],
    ['jwk header', forgeJwt({ ...HEADER, jwk: { kty: 'oct', k: Buffer.from(SECRET).toString('base64url') } }, claims, SECRET)],
    ['kid pointing nowhere', forgeJwt({ ...HEADER, kid: '../../dev/null' }, claims, SECRET)],
    ['no kid', forgeJwt(noKid, claims, SECRET)],
    ['kid of a key that is not configured', forgeJwt({ ...HEADER, kid: secretKeyId('someone-elses-secret-of-32-bytes-or-more') }, claims, 'someone-elses-secret-of-32-bytes-or-more')],
    ['no sid', forgeJwt(HEADER, noSid, SECRET)],
    ['sid of no session', forgeJwt(HEADER, { ...claims, sid: randomBytes(16).toString('base64url') }, SECRET)],
    ['sid of an ended session', forgeJwt(HEADER, { ...claims, sid: endedSession }, SECRET)],
    ['sid of another account\'s session', forgeJwt(HEADER, { ...claims, sid: otherSession }, SECRET)],
    ['an unknown header field', forgeJwt({ typ: 'at+jwt', alg: 'HS256', kid: HEADER.kid, x: 1 }, claims, SECRET)],
    ['crit header', forgeJwt({ ...HEADER, crit: ['exp'] }, claims, SECRET)],
    ['garbage', 'not-a-jwt'],
    ['two parts', `${h}.${p}`],
    ['four parts', `${good}.${s}`],
    ['header not JSON', `${Buffer.from('{"alg":').toString('base64url')}.${p}.${s}`],
    ['very long token', `${h}.${'A'.repeat(8000)}.${s}`]
  ]
  for (const [name, token] of cases) await expectInvalid(t, me, token, name)
})

t.test('an HS256 token signed with the EdDSA public key is rejected (algorithm confusion)', async (t) => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString()
  const { me, ada, token, sessions } = await buildTestApp(t, {
    auth: { jwt: { algorithm: 'EdDSA', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }), publicKey: publicPem } }
  })
  const issued = await token()
  t.equal((await me(issued)).statusCode, 200, 'real EdDSA tokens work')
  const { kid } = decodeJwt(issued).header
  const claims = validClaims(ada.id, await liveSession(sessions, ada.id))
  await expectInvalid(t, me, forgeJwt({ alg: 'HS256', typ: 'at+jwt', kid }, claims, publicPem), 'HS256 keyed with the public key')
  await expectInvalid(t, me, forgeJwt({ alg: 'none', typ: 'at+jwt', kid }, claims), 'alg none')
})

for (const [algorithm, curve] of [['EdDSA', 'ed25519'], ['ES256', 'prime256v1']] as const) {
  t.test(`${algorithm} key pairs sign and verify`, async (t) => {
    const { publicKey, privateKey } = curve === 'ed25519'
      ? generateKeyPairSync('ed25519')
      : generateKeyPairSync('ec', { namedCurve: curve })
    const { token, me, ada, sessions } = await buildTestApp(t, {
      auth: {
        jwt: {
          algorithm,
          privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }),
          publicKey: publicKey.export({ type: 'spki', format: 'pem' })
        }
      }
    })
    const issued = await token()
    const { header } = decodeJwt(issued)
    t.match(header, { alg: algorithm, typ: 'at+jwt', kid: /^[\w-]{43}$/ }, 'the kid is the key\'s RFC 7638 thumbprint')
    t.equal((await me(issued)).statusCode, 200)
    const claims = validClaims(ada.id, await liveSession(sessions, ada.id))
    t.equal((await me(forgeJwt(header, claims, privateKey))).statusCode, 200, 'hand-signed with the key')
    const stranger = curve === 'ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: curve })
    await expectInvalid(t, me, forgeJwt(header, claims, stranger.privateKey), 'signed with another key')
  })
}

t.test('deactivating an account kills its live tokens at the next request, for good', async (t) => {
  const { token, me, accounts, ada } = await buildTestApp(t)
  const issued = await token()
  t.equal((await me(issued)).statusCode, 200)
  accounts.setActive(ada.id, false)
  await expectInvalid(t, me, issued, 'inactive account')
  accounts.setActive(ada.id, true)
  await expectInvalid(t, me, issued, 'reactivated account: a token from before the deactivation stays dead')
})

t.test('a token that expires stops working', async (t) => {
  const { token, me } = await buildTestApp(t, { auth: { jwt: { secret: SECRET, expiresIn: 1 } } })
  const issued = await token()
  t.equal((await me(issued)).statusCode, 200)
  await new Promise((resolve) => setTimeout(resolve, 2100))
  await expectInvalid(t, me, issued, 'after its lifetime')
})
