import { generateKeyPairSync } from 'node:crypto'
import t, { type Test } from 'tap'
import { buildTestApp, decodeJwt, EMAIL, SECRET } from './helpers/app.js'
import { forgeJwt, validClaims } from './helpers/jwt.js'

const HEADER = { alg: 'HS256', typ: 'at+jwt' }

async function expectInvalid (t: Test, me: (token: string) => Promise<any>, token: string, name: string): Promise<void> {
  const response = await me(token)
  t.equal(response.statusCode, 401, name)
  t.equal(response.json().code, 'FST_PWAUTH_TOKEN_INVALID', name)
  t.equal(response.headers['www-authenticate'], 'Bearer realm="fastify-password-auth", error="invalid_token"', name)
}

t.test('a hand-made token with the right key and claims is accepted (the forging helper is sound)', async (t) => {
  const { me, ada } = await buildTestApp(t)
  const response = await me(forgeJwt(HEADER, validClaims(ada.id), SECRET))
  t.equal(response.statusCode, 200)
  t.equal(response.json().id, ada.id)
})

t.test('forged and malformed tokens are invalid', async (t) => {
  const { me, ada, accounts } = await buildTestApp(t)
  const other = accounts.add({ email: 'other@example.com', passwordHash: ada.passwordHash })
  const claims = validClaims(ada.id)
  const good = forgeJwt(HEADER, claims, SECRET)
  const [h, p, s] = good.split('.') as [string, string, string]
  const now = Math.floor(Date.now() / 1000)
  const { jti: _jti, ...noJti } = claims
  const { exp: _exp, ...noExp } = claims
  const { cv: _cv, ...noCv } = claims
  const { sub: _sub, ...noSub } = claims

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
  const { me, ada, token } = await buildTestApp(t, {
    auth: { jwt: { algorithm: 'EdDSA', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }), publicKey: publicPem } }
  })
  t.equal((await me(await token())).statusCode, 200, 'real EdDSA tokens work')
  await expectInvalid(t, me, forgeJwt(HEADER, validClaims(ada.id), publicPem), 'HS256 keyed with the public key')
  await expectInvalid(t, me, forgeJwt({ alg: 'none', typ: 'at+jwt' }, validClaims(ada.id)), 'alg none')
})

for (const [algorithm, curve] of [['EdDSA', 'ed25519'], ['ES256', 'prime256v1']] as const) {
  t.test(`${algorithm} key pairs sign and verify`, async (t) => {
    const { publicKey, privateKey } = curve === 'ed25519'
      ? generateKeyPairSync('ed25519')
      : generateKeyPairSync('ec', { namedCurve: curve })
    const { token, me, ada } = await buildTestApp(t, {
      auth: {
        jwt: {
          algorithm,
          privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }),
          publicKey: publicKey.export({ type: 'spki', format: 'pem' })
        }
      }
    })
    const issued = await token()
    t.same(decodeJwt(issued).header, { alg: algorithm, typ: 'at+jwt' })
    t.equal((await me(issued)).statusCode, 200)
    t.equal((await me(forgeJwt({ alg: algorithm, typ: 'at+jwt' }, validClaims(ada.id), privateKey))).statusCode, 200, 'hand-signed with the key')
    const stranger = curve === 'ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('ec', { namedCurve: curve })
    await expectInvalid(t, me, forgeJwt({ alg: algorithm, typ: 'at+jwt' }, validClaims(ada.id), stranger.privateKey), 'signed with another key')
  })
}

t.test('deactivating an account kills its live tokens at the next request', async (t) => {
  const { token, me, accounts, ada } = await buildTestApp(t)
  const issued = await token()
  t.equal((await me(issued)).statusCode, 200)
  accounts.setActive(ada.id, false)
  await expectInvalid(t, me, issued, 'inactive account')
  accounts.setActive(ada.id, true)
  t.equal((await me(issued)).statusCode, 200, 'reactivation without a password change revives it')
})

t.test('a token that expires stops working', async (t) => {
  const { token, me } = await buildTestApp(t, { auth: { jwt: { secret: SECRET, expiresIn: 1 } } })
  const issued = await token()
  t.equal((await me(issued)).statusCode, 200)
  await new Promise((resolve) => setTimeout(resolve, 2100))
  await expectInvalid(t, me, issued, 'after its lifetime')
})
