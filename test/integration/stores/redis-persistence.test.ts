import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { persistenceWarnings } from '../../../example/stores/redis-persistence.js'
import { PrivateRedis } from '../../helpers/private-redis.js'
import { startServer, type ServerProcess } from '../../helpers/server-process.js'
import { redisUnavailable } from '../../helpers/services.js'

t.test('which Redis settings weaken the guarantees', async (t) => {
  const safe = { appendonly: 'yes', appendfsync: 'everysec', save: '3600 1', maxmemory: '0', 'maxmemory-policy': 'noeviction' }
  t.same(persistenceWarnings(safe), [], 'AOF with fsync every second')
  t.same(persistenceWarnings({ ...safe, appendfsync: 'always' }), [])
  t.same(persistenceWarnings({ ...safe, maxmemory: '1000000' }), [], 'a memory limit that refuses writes instead of evicting')
  t.match(persistenceWarnings({ ...safe, appendonly: 'no', save: '' }), [/no persistence.*appendonly yes/])
  t.match(persistenceWarnings({ ...safe, appendonly: 'no' }), [/RDB snapshots only \(save "3600 1"\)/])
  t.match(persistenceWarnings({ ...safe, appendfsync: 'no' }), [/about 30 s/])
  t.match(persistenceWarnings({ ...safe, maxmemory: '1000000', 'maxmemory-policy': 'volatile-lru' }), [/"volatile-lru".*noeviction/])
  t.match(persistenceWarnings({}), [/no persistence/], 'nothing known: assume the worst')
  // What each loss does: an empty Redis ends sessions (none comes back); one that goes back in time undoes endings.
  const [empty] = persistenceWarnings({ ...safe, appendonly: 'no', save: '' })
  t.match(empty, /every session ends .*blocked e-mails get their free failures back/)
  t.notMatch(empty, /tokens work again|live again/, 'an empty Redis revives no session')
  t.match(persistenceWarnings({ ...safe, appendonly: 'no' })[0], /sessions ended since \(logouts, password changes\) live again/)
  const [evicting] = persistenceWarnings({ ...safe, maxmemory: '1000000', 'maxmemory-policy': 'allkeys-lru' })
  t.match(evicting, /drops keys: sessions end/)
  t.notMatch(evicting, /tokens work again|live again/, 'an evicted session is ended, not revived')
})

/** Waits (at most `ms`) for the server's start-up checks to print a line matching `pattern`. */
async function printed (server: ServerProcess, pattern: RegExp, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (!pattern.test(server.output()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
  return pattern.test(server.output())
}

async function serverOn (t: Test, args: string[]): Promise<ServerProcess> {
  const redis = await PrivateRedis.create(t)
  const dir = await mkdtemp(join(tmpdir(), 'redis-persistence-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  await redis.start(['--dir', dir, ...args])
  return await startServer(t, { REDIS_URL: redis.url, AUTH_RATE_LIMIT: 'off', JWT_SECRET: 'p'.repeat(40) })
}

t.test('the example server warns at start when Redis would forget blocks and logouts', { skip: redisUnavailable }, async (t) => {
  const server = await serverOn(t, [])
  t.ok(await printed(server, /Redis has no persistence/), 'warned')
  t.match(server.output(), /"level":40/, 'at warn level')
})

t.test('no warning for a Redis with appendonly yes and appendfsync everysec', { skip: redisUnavailable }, async (t) => {
  const server = await serverOn(t, ['--appendonly', 'yes', '--appendfsync', 'everysec'])
  const checked = await (await fetch(`${server.url}/health`)).json()
  t.same(checked, { status: 'ok' })
  // The check runs right after start and takes milliseconds: 2 s of silence means nothing to say.
  t.notOk(await printed(server, /Redis (has no|persists|appendfsync|maxmemory)|could not check/, 2000), 'nothing to warn about')
})

t.test('a Redis that refuses CONFIG: the server says it could not check', { skip: redisUnavailable }, async (t) => {
  const server = await serverOn(t, ['--rename-command', 'CONFIG', '""'])
  t.ok(await printed(server, /could not check Redis persistence \(CONFIG GET failed: ERR unknown command/))
})
