import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parseArgon2Hash } from '../../lib/password/legacy/argon2.js'
import { decodeBase64 } from '../../lib/password/legacy/base64.js'
import { createHashTasks, type HashTask } from '../../lib/password/hash-tasks.js'
import { BCRYPT_MODULE, bcryptCost, bcryptLoader, createBcryptVerifier } from '../../lib/password/legacy/bcrypt.js'
import { parseDjangoPbkdf2Hash, verifyDjangoPbkdf2 } from '../../lib/password/legacy/django.js'
import { createHashVerifier, type LegacyHashFormat } from '../../lib/password/legacy/index.js'
import { parseScryptHash, verifyScrypt } from '../../lib/password/legacy/scrypt.js'
import { HashFormatUnavailableError } from '../../lib/password/legacy/types.js'
import {
  ARGON2I, ARGON2ID_P2, BCRYPT_2A, BCRYPT_2B, BCRYPT_2Y, BCRYPT_LONG, BCRYPT_NFC, DJANGO, DJANGO_600K, DJANGO_NFC, DJANGO_NFD,
  LONG_PASSWORD, NFC_PASSWORD, NFD_PASSWORD, PASSWORD, SCRYPT, SCRYPT_NFC, SCRYPT_PADDED
} from '../fixtures/legacy-hashes.js'

const quietLog = { error: () => {} }
// A hashing worker's work, run in this thread: the dispatcher is tested here, the threads in hash-pool.test.ts.
const inProcess = (bcryptModule = BCRYPT_MODULE) => createHashTasks({ params: { memoryCost: 1024, timeCost: 1, parallelism: 1 }, pepper: undefined, bcryptModule })
const verifier = (legacyHashes: LegacyHashFormat[] = []) => {
  const run = inProcess()
  return createHashVerifier({ params: { memoryCost: 19456, timeCost: 2 }, legacyHashes, log: quietLog, verifyBuiltIn: async (task) => run(task) })
}

t.test('base64: standard alphabet, padded or not, nothing else', async (t) => {
  t.same(decodeBase64('aGFzaA'), Buffer.from('hash'))
  t.same(decodeBase64('aGFzaA=='), Buffer.from('hash'))
  t.same(decodeBase64('aGFzaGg='), Buffer.from('hashh'))
  t.same(decodeBase64('aGF'), Buffer.from('ha'))
  t.same(decodeBase64('+/+/'), Buffer.from([0xfb, 0xff, 0xbf]))
  for (const bad of ['', 'aGFzaA=', 'aGFzaA===', 'aGFza', 'a', 'aGFz aA', 'aGFz-_A', 'aGFzaA==aGFz', '====']) {
    t.equal(decodeBase64(bad), null, JSON.stringify(bad))
  }
})

t.test('argon2 PHC strings: any variant and parameters the argon2 option allows', async (t) => {
  t.same(parseArgon2Hash(ARGON2I), { algorithm: 'argon2i', version: 19, memoryCost: 1024, timeCost: 2, parallelism: 1 })
  t.same(parseArgon2Hash(ARGON2ID_P2), { algorithm: 'argon2id', version: 19, memoryCost: 1024, timeCost: 1, parallelism: 2 })
  t.same(parseArgon2Hash('$argon2d$m=4194304,t=100,p=255$c2FsdA$aGFzaA'), { algorithm: 'argon2d', version: 16, memoryCost: 4194304, timeCost: 100, parallelism: 255 })
  for (const bad of [
    '$argon2id$v=19$m=4194305,t=1,p=1$c2FsdA$aGFzaA', // more than 4 GiB
    '$argon2id$v=19$m=1024,t=101,p=1$c2FsdA$aGFzaA',
    '$argon2id$v=19$m=1024,t=0,p=1$c2FsdA$aGFzaA',
    '$argon2id$v=19$m=1024,t=1,p=0$c2FsdA$aGFzaA',
    '$argon2id$v=19$m=1024,t=1,p=256$c2FsdA$aGFzaA',
    '$argon2id$v=19$m=8,t=1,p=2$c2FsdA$aGFzaA', // less than 8 KiB per lane
    '$argon2id$v=19$m=99999999999,t=1,p=1$c2FsdA$aGFzaA',
    '$argon2id$v=18$m=1024,t=1,p=1$c2FsdA$aGFzaA',
    '$argon2x$v=19$m=1024,t=1,p=1$c2FsdA$aGFzaA',
    '$argon2id$v=19$m=1024,t=1,p=1$c2FsdA',
    ARGON2I.slice(0, -1) + '!'
  ]) t.equal(parseArgon2Hash(bad), null, bad)
})

t.test('bcrypt: $2a$, $2b$, $2y$ with a cost from 4 to 14', async (t) => {
  t.equal(bcryptCost(BCRYPT_2B), 4)
  t.equal(bcryptCost(BCRYPT_2A), 4)
  t.equal(bcryptCost(BCRYPT_2Y), 4)
  const body = BCRYPT_2B.slice(7)
  t.equal(bcryptCost(`$2b$14$${body}`), 14)
  for (const bad of [`$2b$15$${body}`, `$2b$16$${body}`, `$2b$31$${body}`, `$2b$03$${body}`, `$2x$04$${body}`, `$2$04$${body}`, `$2b$4$${body}`,
    BCRYPT_2B.slice(0, -1), `${BCRYPT_2B}x`, `$2b$04$${body.slice(1)}!`]) {
    t.equal(bcryptCost(bad), null, bad)
  }
})

t.test('bcrypt verifies hashes libxcrypt made, including UTF-8 and every prefix', async (t) => {
  const verifyBcrypt = createBcryptVerifier(bcryptLoader(BCRYPT_MODULE))
  for (const hash of [BCRYPT_2A, BCRYPT_2B, BCRYPT_2Y]) {
    t.equal(verifyBcrypt(hash, PASSWORD), true, hash.slice(0, 4))
    t.equal(verifyBcrypt(hash, `${PASSWORD}!`), false, `${hash.slice(0, 4)} wrong`)
  }
  t.equal(verifyBcrypt(BCRYPT_NFC, NFC_PASSWORD), true)
  t.equal(verifyBcrypt(BCRYPT_NFC, NFD_PASSWORD), false, 'other bytes, other hash')
})

t.test('bcrypt reads only the first 72 bytes, as the libraries that made the hashes did', async (t) => {
  const verifyBcrypt = createBcryptVerifier(bcryptLoader(BCRYPT_MODULE))
  t.ok(Buffer.byteLength(LONG_PASSWORD) > 72)
  t.equal(verifyBcrypt(BCRYPT_LONG, LONG_PASSWORD), true, 'the whole passphrase')
  const first72 = Buffer.from(LONG_PASSWORD).subarray(0, 72).toString()
  t.equal(verifyBcrypt(BCRYPT_LONG, `${first72} and another ending`), true, 'same first 72 bytes')
  t.equal(verifyBcrypt(BCRYPT_LONG, first72.slice(0, -1)), false, '71 bytes')
})

t.test('bcrypt not installed: the format loads once, then every bcrypt hash is unavailable with the loader\'s error', async (t) => {
  let loads = 0
  const notFound = Object.assign(new Error("Cannot find package '@node-rs/bcrypt'"), { code: 'ERR_MODULE_NOT_FOUND' })
  const verifyBcrypt = createBcryptVerifier(() => { loads++; throw notFound })
  for (const hash of [BCRYPT_2B, BCRYPT_2Y]) {
    t.throws(() => verifyBcrypt(hash, PASSWORD), new HashFormatUnavailableError("Cannot find package '@node-rs/bcrypt'", 'ERR_MODULE_NOT_FOUND'))
  }
  t.equal(loads, 1, 'never retried')
  const odd = createBcryptVerifier(() => { throw null }) // eslint-disable-line no-throw-literal
  t.throws(() => odd(BCRYPT_2B, PASSWORD), { message: 'undefined', code: undefined })
})

t.test('bcrypt not installed: unsupported, reported once, never sent to a worker again', async (t) => {
  const errors: unknown[] = []
  const log = { error: (details: object, message: string) => { errors.push({ details, message }) } }
  const run = inProcess('@node-rs/bcrypt-not-installed')
  const sent: HashTask[] = []
  const verify = createHashVerifier({ params: { memoryCost: 19456, timeCost: 2 }, legacyHashes: [], log, verifyBuiltIn: async (task) => { sent.push(task); return run(task) } })
  t.same(await verify(BCRYPT_2B, PASSWORD), { verdict: 'unsupported_hash', format: 'bcrypt' })
  t.same(await verify(BCRYPT_2Y, 'anything'), { verdict: 'unsupported_hash', format: 'bcrypt' })
  t.equal(sent.length, 1)
  t.equal(errors.length, 1)
  t.match(errors[0], {
    details: { importError: { code: 'MODULE_NOT_FOUND', message: /@node-rs\/bcrypt-not-installed/ } },
    message: /npm install @node-rs\/bcrypt/
  })
  t.same(await verify(SCRYPT, PASSWORD), { verdict: 'verified', format: 'scrypt' }, 'other formats are unaffected')
})

t.test('the real loader loads @node-rs/bcrypt', async (t) => {
  t.type(bcryptLoader(BCRYPT_MODULE)().verifySync, 'function')
})

t.test('a failure leaves a worker\'s work as the kind of failure, never the library\'s text (it may quote a password or hash)', async (t) => {
  const throwing = fileURLToPath(new URL('../fixtures/throwing-bcrypt.js', import.meta.url))
  const run = createHashTasks({ params: { memoryCost: 1024, timeCost: 1, parallelism: 1 }, pepper: undefined, bcryptModule: throwing })
  t.throws(() => run({ kind: 'verify', format: 'bcrypt', hash: BCRYPT_2B, passwords: [PASSWORD] }), { message: 'bcrypt verification failed (Error InvalidArg)' })
  const tooCheap = createHashTasks({ params: { memoryCost: 1, timeCost: 1, parallelism: 1 }, pepper: undefined, bcryptModule: BCRYPT_MODULE })
  t.throws(() => tooCheap({ kind: 'hash', password: PASSWORD }), { message: /^argon2id hashing failed \(Error/ })
  t.match(run({ kind: 'hash', password: PASSWORD }), /^\$argon2id\$v=19\$m=1024,t=1,p=1\$/)
  t.equal(run({ kind: 'verify', format: 'argon2', hash: 'not a hash', passwords: [PASSWORD] }), false, 'argon2 refusing a string is a failure, not an error')
})

t.test('scrypt PHC strings: parameters within 64 MiB and 2^21 block mixes', async (t) => {
  t.match(parseScryptHash(SCRYPT), { cost: 1024, blockSize: 8, parallelization: 1 })
  t.equal(parseScryptHash(SCRYPT)?.hash.length, 32)
  t.equal(parseScryptHash(SCRYPT_PADDED)?.salt.length, 15)
  t.ok(parseScryptHash('$scrypt$ln=16,r=8,p=1$c2FsdA$' + 'A'.repeat(43)), 'passlib default: 64 MiB')
  const [salt, hash] = SCRYPT.split('$').slice(3)
  for (const bad of [
    `$scrypt$ln=40,r=8,p=1$${salt}$${hash}`,
    `$scrypt$ln=17,r=8,p=1$${salt}$${hash}`, // 128 MiB
    `$scrypt$ln=14,r=8,p=32$${salt}$${hash}`, // 2^22 block mixes
    `$scrypt$ln=0,r=8,p=1$${salt}$${hash}`,
    `$scrypt$ln=10,r=0,p=1$${salt}$${hash}`,
    `$scrypt$ln=10,r=8,p=0$${salt}$${hash}`,
    `$scrypt$ln=10,r=8$${salt}$${hash}`,
    `$scrypt$ln=10,r=8,p=1$${salt}$`,
    `$scrypt$ln=10,r=8,p=1$${salt}`,
    `$scrypt$ln=10,r=8,p=1$${salt}$${hash!.slice(0, 20)}`, // 15 bytes: shorter than any real key
    `$scrypt$ln=10,r=8,p=1$${salt}$${hash}${'A'.repeat(172)}`, // more than 128 bytes
    `$scrypt$ln=10,r=8,p=1$${'A'.repeat(344)}$${hash}`, // salt of 258 bytes
    `$scrypt$ln=10,r=8,p=1$${salt}$${hash!.slice(2)}`, // 41 characters: not base64
    `$scrypt$ln=10,r=8,p=1$${salt}=$${hash}`,
    `$scrypt$ln=10,r=8,p=1$${salt}$${hash}!`
  ]) t.equal(parseScryptHash(bad), null, bad)
})

t.test('scrypt verifies hashes hashlib made, constant-time', async (t) => {
  t.equal(verifyScrypt(SCRYPT, PASSWORD), true)
  t.equal(verifyScrypt(SCRYPT_PADDED, PASSWORD), true)
  t.equal(verifyScrypt(SCRYPT_NFC, NFC_PASSWORD), true)
  t.equal(verifyScrypt(SCRYPT, `${PASSWORD} `), false)
  t.equal(verifyScrypt('$scrypt$ln=40,r=8,p=1$c2FsdA$aGFzaA', PASSWORD), false, 'never derives for a refused string')
})

t.test('Django pbkdf2_sha256: 1 to 5 000 000 iterations, text salt, base64 hash', async (t) => {
  t.same(parseDjangoPbkdf2Hash(DJANGO), { iterations: 1000, salt: 'Xk3vQp9LmR2s', hash: Buffer.from(DJANGO.split('$')[3]!, 'base64') })
  t.equal(parseDjangoPbkdf2Hash(DJANGO.replace(/=$/, ''))?.hash.length, 32, 'padding is optional')
  const hash = DJANGO.split('$')[3]
  for (const bad of [
    `pbkdf2_sha256$1000000000000$salt$${hash}`,
    `pbkdf2_sha256$2000001$salt$${hash}`,
    `pbkdf2_sha256$0$salt$${hash}`,
    `pbkdf2_sha256$$salt$${hash}`,
    `pbkdf2_sha256$1000$$${hash}`,
    'pbkdf2_sha256$1000$salt$',
    'pbkdf2_sha256$1000$salt',
    `pbkdf2_sha256$1000$salt$${hash!.slice(0, 20)}`, // 15 bytes
    `pbkdf2_sha256$1000$salt$${hash}${hash}`, // not base64 (padding inside)
    `pbkdf2_sha256$1000$salt$${'A'.repeat(88)}`, // 66 bytes
    `pbkdf2_sha256$1000$salt$${hash!.replace('=', '!')}`,
    `pbkdf2_sha1$1000$salt$${hash}`,
    `PBKDF2_SHA256$1000$salt$${hash}`
  ]) t.equal(parseDjangoPbkdf2Hash(bad), null, bad)
})

t.test('Django verifies hashes hashlib made', async (t) => {
  t.equal(verifyDjangoPbkdf2(DJANGO, PASSWORD), true)
  t.equal(verifyDjangoPbkdf2(DJANGO_NFC, NFC_PASSWORD), true)
  t.equal(verifyDjangoPbkdf2(DJANGO_600K, PASSWORD), true, 'Django 4.2 iteration count')
  t.equal(verifyDjangoPbkdf2(DJANGO, PASSWORD.toUpperCase()), false)
  t.equal(verifyDjangoPbkdf2('pbkdf2_sha256$0$salt$aGFzaA==', PASSWORD), false, 'never derives for a refused string')
})

t.test('the dispatcher: argon2 in NFC; legacy formats as typed, then in NFC if that differs', async (t) => {
  const verify = verifier()
  const argon2i = { algorithm: 'argon2i', version: 19, memoryCost: 1024, timeCost: 2, parallelism: 1 }
  t.same(await verify(ARGON2I, PASSWORD), { verdict: 'verified', format: 'argon2i', argon2: argon2i }, 'with the parameters, parsed once')
  t.same(await verify(ARGON2I, 'nope'), { verdict: 'wrong_password', format: 'argon2i', argon2: argon2i })
  t.match(await verify('$argon2id$v=19$m=1024,t=1,p=1$c2E$aGFzaA', PASSWORD), { verdict: 'wrong_password', format: 'argon2id' },
    'a string argon2 itself refuses (salt too short) is just a failure')
  t.same(await verify(BCRYPT_2B, PASSWORD), { verdict: 'verified', format: 'bcrypt' })
  t.same(await verify(DJANGO, 'nope'), { verdict: 'wrong_password', format: 'django-pbkdf2-sha256' })
  t.same(await verify('sha1$abc$def', PASSWORD), { verdict: 'unsupported_hash' })
  t.same(await verify('', PASSWORD), { verdict: 'unsupported_hash' })

  t.same(await verify(DJANGO_NFC, NFD_PASSWORD), { verdict: 'verified', format: 'django-pbkdf2-sha256' },
    'hashed in NFC, typed decomposed: the NFC form matches')
  t.same(await verify(DJANGO_NFD, NFD_PASSWORD), { verdict: 'verified', format: 'django-pbkdf2-sha256' },
    'hashed decomposed, typed decomposed: the typed form matches')
  t.same(await verify(DJANGO_NFD, NFC_PASSWORD), { verdict: 'wrong_password', format: 'django-pbkdf2-sha256' },
    'hashed decomposed, typed composed: nothing recovers the decomposed form')
})

t.test('host formats: tried before the built-in legacy ones, after argon2, only exactly true verifies', async (t) => {
  const seen: Array<[string, string]> = []
  const sha1: LegacyHashFormat = {
    name: 'php-sha1',
    test: (hash) => hash.startsWith('sha1$') || hash.startsWith('$2y$'),
    verify: async (hash, password) => { seen.push([hash, password]); return password === 'sesame' }
  }
  const truthy: LegacyHashFormat = { name: 'truthy', test: (hash) => hash.startsWith('truthy$'), verify: async () => 'yes' as unknown as boolean }
  const verify = verifier([sha1, truthy])
  t.same(await verify('sha1$whatever', 'sesame'), { verdict: 'verified', format: 'php-sha1' })
  t.same(await verify('sha1$whatever', 'nope'), { verdict: 'wrong_password', format: 'php-sha1' })
  t.same(await verify(BCRYPT_2Y, 'sesame'), { verdict: 'verified', format: 'php-sha1' }, 'a host format may take over $2y$')
  t.match(await verify(ARGON2I, PASSWORD), { verdict: 'verified', format: 'argon2i' }, 'argon2 stays the plugin\'s')
  t.same(await verify('truthy$x', PASSWORD), { verdict: 'wrong_password', format: 'truthy' })
  t.same(await verify('sha1$whatever', NFD_PASSWORD), { verdict: 'wrong_password', format: 'php-sha1' })
  t.same(seen.slice(-2).map(([, password]) => password), [NFD_PASSWORD, NFC_PASSWORD], 'as typed, then NFC')

  const failing = verifier([{ name: 'down', test: () => true, verify: async () => { throw new Error('verifier service down') } }])
  await t.rejects(failing('anything', PASSWORD), { message: 'verifier service down' }, 'a failing verifier is not a wrong password')
})
