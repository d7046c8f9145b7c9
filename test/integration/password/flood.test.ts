import t from 'tap'
import { hashPassword } from '../../../lib/index.js'
import { writeAccountsFile } from '../../helpers/accounts-file.js'
import { post, startServer } from '../../helpers/server-process.js'

// Behaviour only; latency and memory under load are measured by `npm run bench`.
t.test('a flood of 1000 concurrent right and wrong logins gets only 200, 401, 429 and 503', async (t) => {
  const hash = await hashPassword('the flood test passphrase')
  const emails = Array.from({ length: 50 }, (_, i) => `flood${i}@example.com`)
  const file = await writeAccountsFile(t, emails.map((email) => ({ email, passwordHash: hash })))
  const server = await startServer(t, { AUTH_ACCOUNTS_FILE: file, AUTH_RATE_LIMIT: 'off', JWT_SECRET: 'f'.repeat(40) })

  const token = (await (await post(`${server.url}/Auth/Login`, { email: emails[0], password: 'the flood test passphrase' })).json() as { accessToken: string }).accessToken
  const responses = await Promise.all(Array.from({ length: 1000 }, async (_, i) =>
    await post(`${server.url}/Auth/Login`, { email: emails[i % emails.length], password: i % 2 === 0 ? 'the flood test passphrase' : `wrong ${i}` })))
  const counts: Record<number, number> = {}
  for (const response of responses) {
    counts[response.status] = (counts[response.status] ?? 0) + 1
    if (response.status === 503 || response.status === 429) t.ok(Number(response.headers.get('retry-after')) >= 1)
    await response.arrayBuffer()
  }
  t.same(Object.keys(counts).filter((status) => !['200', '401', '429', '503'].includes(status)), [], `statuses ${JSON.stringify(counts)}`)
  t.ok((counts[503] ?? 0) > 0, 'excess hashing work was shed')
  t.ok((counts[200] ?? 0) > 0, 'while real logins still succeeded')
  const me = await fetch(`${server.url}/me`, { headers: { authorization: `Bearer ${token}` } })
  t.equal(me.status, 200, 'authenticated requests are still served')
  t.equal(server.process.exitCode, null)
})
