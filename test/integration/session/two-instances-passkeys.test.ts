import { writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { outboxMessage } from '../../helpers/outbox.js'
import { post, startServer } from '../../helpers/server-process.js'
import { postgresSchema, postgresUnavailable, REDIS_URL, redisUnavailable } from '../../helpers/services.js'
import { SoftAuthenticator } from '../../helpers/soft-authenticator.js'

const ORIGIN = 'https://app.example.test'

t.test('passkeys over two example-server processes sharing PostgreSQL and Redis', { skip: postgresUnavailable || redisUnavailable }, async (t) => {
  const { url: databaseUrl } = await postgresSchema(t, 'passkey_instances')
  const run = `${process.pid}-${Date.now().toString(36)}`
  const ada = `ada-${run}@example.com`
  const file = join(tmpdir(), `passkey-instances-${run}.json`)
  const outbox = join(tmpdir(), `passkey-instances-${run}.outbox.jsonl`)
  await writeFile(file, JSON.stringify([{ email: ada, password: 'correct horse battery staple' }]))
  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    JWT_SECRET: `passkey-instances-secret-${'x'.repeat(32)}`,
    AUTH_ACCOUNTS_FILE: file,
    AUTH_RATE_LIMIT: 'off',
    AUTH_MAIL_OUTBOX: outbox,
    AUTH_PASSKEY_RP_ID: 'example.test',
    AUTH_PASSKEY_ORIGINS: ORIGIN
  }
  const [a, b] = await Promise.all([startServer(t, env), startServer(t, env)])
  const key = new SoftAuthenticator({ origin: ORIGIN })

  const { accessToken } = await (await post(`${a.url}/Auth/Login`, { email: ada, password: 'correct horse battery staple' })).json() as { accessToken: string }
  const auth = { authorization: `Bearer ${accessToken}` }
  const options = await (await post(`${a.url}/Auth/Passkeys/RegisterOptions`, undefined, auth)).json() as { challenge: string, rp: { id: string }, user: { id: string } }
  t.equal(options.rp.id, 'example.test', 'the rpId of the configuration')
  const added = await post(`${a.url}/Auth/Passkeys`, { response: key.create(options), name: 'Laptop', password: 'correct horse battery staple' }, auth)
  t.equal(added.status, 201, 'registered on A')
  t.match(await outboxMessage(outbox, 'passkey_added', ada), { type: 'passkey_added', to: ada })

  const loginOptions = async (server: { url: string }) => await (await post(`${server.url}/Auth/Passkeys/LoginOptions`)).json() as { challenge: string, rpId: string }
  const signedIn = await post(`${b.url}/Auth/LoginPasskey`, { response: key.get(await loginOptions(a)) })
  t.equal(signedIn.status, 200, 'options from A, signed in on B')
  const { accessToken: passkeyToken } = await signedIn.json() as { accessToken: string }
  t.equal((await fetch(`${a.url}/me`, { headers: { authorization: `Bearer ${passkeyToken}` } })).status, 200, 'the session works on A')

  // One assertion sent to both instances at once, ten times each: one sign-in.
  const response = key.get(await loginOptions(b))
  const statuses = await Promise.all(Array.from({ length: 20 }, async (_, i) => (await post(`${(i % 2 === 0 ? a : b).url}/Auth/LoginPasskey`, { response })).status))
  t.equal(statuses.filter((status) => status === 200).length, 1, `one success: ${statuses.join(' ')}`)
  t.ok(statuses.every((status) => [200, 401].includes(status)), 'the others: the one 401 (no credential is counted)')
  t.equal((await post(`${b.url}/Auth/LoginPasskey`, { response: key.get(await loginOptions(a)) })).status, 200, 'the race\'s failures block nothing')

  // Removed on B, it signs in on A no more.
  const spare = new SoftAuthenticator({ origin: ORIGIN })
  const spareOptions = await (await post(`${a.url}/Auth/Passkeys/RegisterOptions`, undefined, auth)).json() as { challenge: string, rp: { id: string }, user: { id: string } }
  t.equal((await post(`${a.url}/Auth/Passkeys`, { response: spare.create(spareOptions), name: 'Phone', password: 'correct horse battery staple' }, auth)).status, 201)
  t.equal((await post(`${b.url}/Auth/LoginPasskey`, { response: spare.get(await loginOptions(b)) })).status, 200, 'the second one signs in')
  const list = await (await fetch(`${b.url}/Auth/Passkeys`, { headers: auth })).json() as Array<{ id: string }>
  t.same(list.map(({ id }) => id).sort(), [key.credentials[0]!.id, spare.credentials[0]!.id].sort())
  t.equal((await fetch(`${b.url}/Auth/Passkeys/${spare.credentials[0]!.id}`, { method: 'DELETE', headers: auth })).status, 204)
  t.equal((await post(`${a.url}/Auth/LoginPasskey`, { response: spare.get(await loginOptions(a)) })).status, 401, 'removed on B, refused on A')
})
