import t from 'tap'
import { MemoryAccountStore, type AccountStore, type AuthEvent } from '../../lib/index.js'
import { buildTestApp, type TestApp } from '../helpers/app.js'
import {
  ARGON2I, ARGON2ID_WEAK, BCRYPT_2A, BCRYPT_2B, BCRYPT_2Y, BCRYPT_LONG, BCRYPT_NFC, DJANGO, DJANGO_NFC, DJANGO_NFD,
  LONG_PASSWORD, NFC_PASSWORD, NFD_PASSWORD, PASSWORD, SCRYPT, SCRYPT_NFC, SCRYPT_PADDED
} from '../fixtures/legacy-hashes.js'

const UPGRADED = /^\$argon2id\$v=19\$m=1024,t=1,p=1\$/
const NEW_PASSWORD = 'a new passphrase after the move'

const FORMATS: Array<[string, string, string]> = [
  ['bcrypt $2b$', BCRYPT_2B, 'bcrypt'],
  ['bcrypt $2a$', BCRYPT_2A, 'bcrypt'],
  ['bcrypt $2y$', BCRYPT_2Y, 'bcrypt'],
  ['scrypt', SCRYPT, 'scrypt'],
  ['scrypt, padded base64', SCRYPT_PADDED, 'scrypt'],
  ['Django PBKDF2', DJANGO, 'django-pbkdf2-sha256'],
  ['argon2i', ARGON2I, 'argon2i'],
  ['argon2id, weaker parameters', ARGON2ID_WEAK, 'argon2id']
]

async function appWithEvents (t: Parameters<typeof buildTestApp>[0], auth = {}): Promise<TestApp & { events: AuthEvent[] }> {
  const events: AuthEvent[] = []
  const app = await buildTestApp(t, { auth: { onEvent: (event) => { events.push(event) }, ...auth } })
  return { ...app, events }
}

async function storedHash (app: TestApp, email: string): Promise<string | undefined> {
  return (await app.accounts.findByEmail(email))?.passwordHash
}

function lastFailure (events: AuthEvent[]): string | undefined {
  const failure = events.findLast((e) => e.type === 'login.failed' || e.type === 'password.change_failed')
  return failure !== undefined && 'reason' in failure ? failure.reason : undefined
}

t.test('each format logs in once, becomes argon2id with the configured parameters and keeps its sessions', async (t) => {
  for (const [label, hash, from] of FORMATS) {
    t.test(label, async (t) => {
      const app = await appWithEvents(t)
      const email = 'moved@example.com'
      const account = app.accounts.add({ email, passwordHash: hash })
      const response = await app.login(email, PASSWORD)
      t.equal(response.statusCode, 200)
      t.match(await storedHash(app, email), UPGRADED)
      t.equal((await app.accounts.findByEmail(email))?.credentialVersion, 0, 'the credential version stays')
      t.equal((await app.me(response.json().accessToken)).statusCode, 200)
      t.match(app.events.find((e) => e.type === 'password.rehashed'), { accountId: account.id, email, from })
      t.equal((await app.login(email, PASSWORD)).statusCode, 200, 'the new hash verifies')
      t.equal(app.events.filter((e) => e.type === 'password.rehashed').length, 1, 'and is left alone')
      t.notOk(JSON.stringify(app.events).includes(hash), 'no hash in the events')
    })
  }
})

t.test('a token issued while the legacy hash was stored survives its upgrade', async (t) => {
  const inner = new MemoryAccountStore()
  let refuse = true
  const accounts = {
    findByEmail: inner.findByEmail.bind(inner),
    findById: inner.findById.bind(inner),
    updatePasswordHash: async (update: Parameters<MemoryAccountStore['updatePasswordHash']>[0]) =>
      refuse ? false : await inner.updatePasswordHash(update)
  }
  const app = await buildTestApp(t, { auth: { accounts } })
  inner.add({ email: 'moved@example.com', passwordHash: BCRYPT_2B })
  const earlier = await app.token('moved@example.com', PASSWORD)
  t.equal((await inner.findByEmail('moved@example.com'))?.passwordHash, BCRYPT_2B, 'not upgraded yet')
  refuse = false
  await app.token('moved@example.com', PASSWORD)
  t.match((await inner.findByEmail('moved@example.com'))?.passwordHash, UPGRADED)
  t.equal((await app.me(earlier)).statusCode, 200)
})

t.test('a wrong password is the same 401 for every format, with the reason wrong_password', async (t) => {
  const app = await appWithEvents(t)
  const unknown = await app.login('nobody@example.com', 'not the password')
  FORMATS.forEach(([, hash], i) => app.accounts.add({ email: `user${i}@example.com`, passwordHash: hash }))
  for (const [i, [label, hash]] of FORMATS.entries()) {
    const response = await app.login(`user${i}@example.com`, 'not the password')
    t.equal(response.statusCode, 401, label)
    t.same(response.json(), unknown.json(), `${label}: the body of an unknown e-mail`)
    t.equal(response.headers['www-authenticate'], unknown.headers['www-authenticate'])
    t.equal(lastFailure(app.events), 'wrong_password', label)
    t.equal(await storedHash(app, `user${i}@example.com`), hash, `${label}: unchanged`)
  }
})

t.test('non-ASCII passwords: NFC hashes, decomposed input, decomposed hashes', async (t) => {
  const app = await appWithEvents(t)
  app.accounts.add({ email: 'b@example.com', passwordHash: BCRYPT_NFC })
  app.accounts.add({ email: 's@example.com', passwordHash: SCRYPT_NFC })
  app.accounts.add({ email: 'd@example.com', passwordHash: DJANGO_NFC })
  app.accounts.add({ email: 'nfd@example.com', passwordHash: DJANGO_NFD })
  app.accounts.add({ email: 'nfd2@example.com', passwordHash: DJANGO_NFD })
  t.equal((await app.login('b@example.com', NFC_PASSWORD)).statusCode, 200)
  t.equal((await app.login('s@example.com', NFD_PASSWORD)).statusCode, 200, 'typed decomposed, hashed composed')
  t.equal((await app.login('d@example.com', NFC_PASSWORD)).statusCode, 200)
  t.equal((await app.login('nfd@example.com', NFD_PASSWORD)).statusCode, 200, 'hashed as typed, decomposed')
  t.equal((await app.login('nfd2@example.com', NFC_PASSWORD)).statusCode, 401, 'composed input cannot match a decomposed hash')
  for (const email of ['b@example.com', 's@example.com', 'd@example.com', 'nfd@example.com']) {
    t.match(await storedHash(app, email), UPGRADED)
    t.equal((await app.login(email, NFC_PASSWORD)).statusCode, 200, `${email}: upgraded in NFC, either form logs in`)
    t.equal((await app.login(email, NFD_PASSWORD)).statusCode, 200)
  }
})

t.test('bcrypt and 72 bytes: logs in as the old system did, but never upgrades from a password bcrypt only read in part', async (t) => {
  const app = await appWithEvents(t)
  const first72 = Buffer.from(LONG_PASSWORD).subarray(0, 72).toString()
  app.accounts.add({ email: 'long@example.com', passwordHash: BCRYPT_LONG })
  const variant = `${first72}, and then something else`
  t.equal((await app.login('long@example.com', variant)).statusCode, 200, 'the hash never held more than 72 bytes: the old system let it in too')
  t.equal(await storedHash(app, 'long@example.com'), BCRYPT_LONG, 'not upgraded from the variant')
  t.match(app.events.at(-1), { type: 'login.succeeded' })
  t.ok(app.events.some((event) => event.type === 'password.rehash_skipped' && event.reason === 'bcrypt_72_bytes' && event.email === 'long@example.com'),
    'the event says why')
  t.equal((await app.login('long@example.com', LONG_PASSWORD)).statusCode, 200, 'so the owner\'s real password keeps working')
  t.equal(await storedHash(app, 'long@example.com'), BCRYPT_LONG, 'nor from the real one, which nothing tells apart')

  // A 3-byte character straddling byte 72: its first byte is inside, the rest outside.
  const straddling = `${'a'.repeat(71)}€ and more`
  t.ok(Buffer.byteLength(straddling) > 72)
  const { hash } = await import('@node-rs/bcrypt')
  app.accounts.add({ email: 'euro@example.com', passwordHash: await hash(straddling, 4) })
  t.equal((await app.login('euro@example.com', straddling)).statusCode, 200)
  t.match(await storedHash(app, 'euro@example.com'), /^\$2/, 'still bcrypt')

  app.accounts.add({ email: 'short@example.com', passwordHash: await hash(PASSWORD, 4) })
  t.equal((await app.login('short@example.com', PASSWORD)).statusCode, 200)
  t.match(await storedHash(app, 'short@example.com'), UPGRADED, 'a password within 72 bytes is upgraded as before')
})

t.test('a hash in no known format, or a damaged one, fails like a wrong password at the cost of one verification', async (t) => {
  const app = await appWithEvents(t)
  const body = BCRYPT_2B.slice(7)
  const [scryptSalt, scryptHash] = SCRYPT.split('$').slice(3)
  const djangoHash = DJANGO.split('$')[3]
  const unsupported = [
    'sha1$abc$0123456789abcdef', '', 'plain text password', '!', '$1$saltsalt$qjXMvbEw8oaL.CzflDugX/',
    BCRYPT_2B.slice(0, 40), `$2b$31$${body}`, `$2b$16$${body}`, `$2b$15$${body}`, `$2x$04$${body}`,
    // Damaged: stray bits in the last character of the salt, or of the hash (bcrypt refuses it in 1 ms).
    damageBcrypt(BCRYPT_2B, 28), damageBcrypt(BCRYPT_2B, 59),
    SCRYPT.slice(0, 30), `$scrypt$ln=40,r=8,p=1$${scryptSalt}$${scryptHash}`, `$scrypt$ln=20,r=8,p=1$${scryptSalt}$${scryptHash}`,
    `$scrypt$ln=14,r=8,p=1000$${scryptSalt}$${scryptHash}`, `$scrypt$ln=10,r=8,p=1$${scryptSalt}$${scryptHash!.slice(2)}`,
    `$scrypt$ln=10,r=8,p=1$${scryptSalt}$%%%`,
    DJANGO.slice(0, 25), `pbkdf2_sha256$1000000000000$Xk3vQp9LmR2s$${djangoHash}`, `pbkdf2_sha256$2000001$Xk3vQp9LmR2s$${djangoHash}`,
    '$argon2id$v=19$m=262145,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2g', '$argon2id$v=19$m=1024,t=11,p=1$c2FsdHNhbHQ$aGFzaGhhc2g', 'pbkdf2_sha256$1000$Xk3vQp9LmR2s$not*base64',
    '$argon2id$v=19$m=4294967295,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2g', '$argon2id$v=19$m=1024,t=1000000,p=1$c2FsdHNhbHQ$aGFzaGhhc2g',
    ARGON2I.slice(0, 40)
  ]
  const reference = await app.login('nobody@example.com', PASSWORD)
  for (const [i, hash] of unsupported.entries()) {
    const email = `odd${i}@example.com`
    app.accounts.add({ email, passwordHash: hash })
    const before = app.app.passwordAuth.stats().verifications
    const started = performance.now()
    const response = await app.login(email, PASSWORD)
    const ms = performance.now() - started
    t.equal(response.statusCode, 401, JSON.stringify(hash))
    t.same(response.json(), reference.json())
    t.equal(lastFailure(app.events), 'unsupported_hash', JSON.stringify(hash))
    t.equal(app.app.passwordAuth.stats().verifications - before, 1, 'one (dummy) verification')
    t.ok(ms < 2000, `answered in ${ms.toFixed(0)} ms`)
  }

  const change = await app.changePassword({ email: 'odd0@example.com', currentPassword: PASSWORD, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })
  t.equal(change.statusCode, 401)
  t.equal(lastFailure(app.events), 'unsupported_hash')
})

t.test('a damaged hash of a known format that still parses is just a wrong password', async (t) => {
  const app = await appWithEvents(t)
  app.accounts.add({ email: 'cut@example.com', passwordHash: '$argon2id$v=19$m=1024,t=1,p=1$c2E$aGFzaA' })
  t.equal((await app.login('cut@example.com', PASSWORD)).statusCode, 401)
  t.equal(lastFailure(app.events), 'wrong_password')
})

t.test('ChangePassword accepts a legacy current password', async (t) => {
  for (const [label, hash] of FORMATS) {
    const app = await appWithEvents(t)
    app.accounts.add({ email: 'moved@example.com', passwordHash: hash })
    const before = await app.token('moved@example.com', PASSWORD)
    const change = await app.changePassword({ email: 'moved@example.com', currentPassword: PASSWORD, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })
    t.equal(change.statusCode, 204, label)
    const account = await app.accounts.findByEmail('moved@example.com')
    t.match(account?.passwordHash, UPGRADED)
    t.equal(account?.credentialVersion, 1)
    t.equal((await app.me(before)).statusCode, 401, `${label}: earlier tokens die`)
    t.equal((await app.login('moved@example.com', PASSWORD)).statusCode, 401)
    t.equal((await app.login('moved@example.com', NEW_PASSWORD)).statusCode, 200)
  }
  const app = await appWithEvents(t)
  app.accounts.add({ email: 'fresh@example.com', passwordHash: DJANGO })
  const change = await app.changePassword({ email: 'fresh@example.com', currentPassword: PASSWORD, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })
  t.equal(change.statusCode, 204, 'without a login first')
  t.equal((await app.login('fresh@example.com', NEW_PASSWORD)).statusCode, 200)
  t.equal((await app.changePassword({ email: 'fresh@example.com', currentPassword: 'wrong', newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })).statusCode, 401)
})

/** A memory store whose compare-and-set calls of one kind wait at a gate the test opens. */
function gatedStore (gateRehash: boolean): { accounts: MemoryAccountStore, store: AccountStore, reached: Promise<void>, open: () => void } {
  const accounts = new MemoryAccountStore()
  let arrive!: () => void
  let open!: () => void
  const reached = new Promise<void>((resolve) => { arrive = resolve })
  const gate = new Promise<void>((resolve) => { open = resolve })
  const store: AccountStore = {
    findByEmail: accounts.findByEmail.bind(accounts),
    findById: accounts.findById.bind(accounts),
    updatePasswordHash: async (update) => {
      if (update.advanceCredentialVersion === !gateRehash) {
        arrive()
        await gate
      }
      return await accounts.updatePasswordHash(update)
    }
  }
  return { accounts, store, reached, open }
}

t.test('an upgrade racing a password change: the change wins, or fails and leaves the old password as it was', async (t) => {
  const body = { email: 'moved@example.com', currentPassword: PASSWORD, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD }

  t.test('the change lands between the login\'s verification and its upgrade', async (t) => {
    const { accounts, store, reached, open } = gatedStore(true)
    const app = await buildTestApp(t, { auth: { accounts: store } })
    accounts.add({ email: 'moved@example.com', passwordHash: BCRYPT_2B })
    const login = app.login('moved@example.com', PASSWORD)
    await reached
    t.equal((await app.changePassword(body)).statusCode, 204)
    open()
    const token = (await login).json().accessToken
    t.ok(token, 'the login itself succeeded: its password was right when it was checked')
    t.equal((await app.me(token)).statusCode, 401, 'but its token died with the change')
    t.equal((await app.login('moved@example.com', PASSWORD)).statusCode, 401, 'the old password does not work')
    t.equal((await app.login('moved@example.com', NEW_PASSWORD)).statusCode, 200)
    t.equal((await accounts.findByEmail('moved@example.com'))?.credentialVersion, 1)
  })

  t.test('the upgrade lands between the change\'s verification and its update', async (t) => {
    const events: AuthEvent[] = []
    const { accounts, store, reached, open } = gatedStore(false)
    const app = await buildTestApp(t, { auth: { accounts: store, onEvent: (event) => { events.push(event) } } })
    accounts.add({ email: 'moved@example.com', passwordHash: BCRYPT_2B })
    const change = app.changePassword(body)
    await reached
    t.equal((await app.login('moved@example.com', PASSWORD)).statusCode, 200)
    t.match(await accounts.findByEmail('moved@example.com'), { passwordHash: UPGRADED, credentialVersion: 0 })
    open()
    t.equal((await change).statusCode, 401, 'the change did not happen, and says so')
    t.match(events.find((e) => e.type === 'password.change_failed'), { reason: 'conflict' })
    t.equal((await app.login('moved@example.com', NEW_PASSWORD)).statusCode, 401)
    t.equal((await app.login('moved@example.com', PASSWORD)).statusCode, 200, 'the old password is still the password')
  })
})

/** `hash` with stray low bits set in its character at `index` (the last of the salt is 28, of the hash 59). */
function damageBcrypt (hash: string, index: number): string {
  const alphabet = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
  return hash.slice(0, index) + alphabet[alphabet.indexOf(hash[index]!) | 1] + hash.slice(index + 1)
}

t.test('upgradeHashes: false keeps every stored hash byte for byte, login after login', async (t) => {
  for (const [label, hash] of FORMATS) {
    t.test(label, async (t) => {
      const app = await appWithEvents(t, { upgradeHashes: false })
      const email = 'still-shared@example.com'
      app.accounts.add({ email, passwordHash: hash })
      for (let i = 0; i < 2; i++) t.equal((await app.login(email, PASSWORD)).statusCode, 200, `login ${i + 1}`)
      t.equal(await storedHash(app, email), hash, 'the old system can still read it')
      t.notOk(app.events.some((e) => e.type === 'password.rehashed'))
    })
  }
})

t.test('upgradeHashes must be true or false', async (t) => {
  await t.rejects(buildTestApp(t, { auth: { upgradeHashes: 'no' as unknown as boolean } }), /upgradeHashes must be true or false/)
})
