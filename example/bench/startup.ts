/**
 * Run as a child process (a fresh heap each time): registers the plugin on memory stores and prints, as
 * JSON, how long `register` + `ready` took and the RSS and heap after a GC. `node startup.js common` keeps
 * the built-in list of common passwords on; `node startup.js no-common` turns it off.
 */
import Fastify from 'fastify'
import passwordAuth, { MemoryAccountStore } from '../../lib/index.js'

const common = process.argv[2] === 'common'
const gc = (globalThis as { gc?: () => void }).gc
gc?.()
const before = process.memoryUsage()
const started = performance.now()
const app = Fastify()
await app.register(passwordAuth, {
  accounts: new MemoryAccountStore(), jwt: { secret: 'bench-startup-secret-of-32-bytes-or-more' }, passwordPolicy: { common }
})
await app.ready()
const ms = performance.now() - started
gc?.()
const after = process.memoryUsage()
console.log(JSON.stringify({ common, ms, rss: after.rss, heapUsed: after.heapUsed, rssGrowth: after.rss - before.rss, heapGrowth: after.heapUsed - before.heapUsed }))
await app.close()
