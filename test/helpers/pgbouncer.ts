import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { freePort } from './free-port.js'
import { DATABASE_URL } from './services.js'
import type { Teardown } from './teardown.js'

const PGBOUNCER = process.env.TEST_PGBOUNCER ?? '/usr/sbin/pgbouncer'
const START_MS = 20_000

/**
 * Why the PgBouncer tests cannot run here (no pgbouncer binary), or false. In CI that is an error
 * instead: these tests must never be skipped there (.ci/run installs Debian's pgbouncer).
 */
export const pgbouncerUnavailable = await (async (): Promise<string | false> => {
  try {
    await promisify(execFile)(PGBOUNCER, ['--version'], { timeout: 10_000 })
    return false
  } catch (err) {
    const reason = `pgbouncer is not available at ${PGBOUNCER} (${(err as Error).message}); apt-get install pgbouncer to run these tests`
    if (process.env.CI !== undefined) throw new Error(`CI: ${reason}`)
    return reason
  }
})()

/**
 * A PgBouncer of the test's own in transaction mode, in front of the shared PostgreSQL, on a free port
 * of 127.0.0.1, with fewer server connections (`serverConnections`) than a test's pool opens: every
 * transaction may land on any of them, as behind a hosted pooler. Its URL names the same database;
 * PgBouncer takes no `options` startup parameter (search_path), so tests name their schema in table names.
 * Teardown stops it by PID and removes its directory.
 */
export async function startPgBouncer (t: Teardown, { serverConnections = 3 } = {}): Promise<{ url: string }> {
  const target = new URL(DATABASE_URL)
  const port = await freePort()
  const dir = await mkdtemp(join(tmpdir(), 'fpa-pgbouncer-'))
  await chmod(dir, 0o755) // root starts it as nobody (pgbouncer refuses to run as root), who must read the config
  const config = join(dir, 'pgbouncer.ini')
  const database = target.pathname.slice(1)
  await writeFile(config, `[databases]
${database} = host=${target.hostname} port=${target.port || 5432} dbname=${database} user=${decodeURIComponent(target.username || 'postgres')}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = any
pool_mode = transaction
default_pool_size = ${serverConnections}
max_client_conn = 200
ignore_startup_parameters = extra_float_digits
`, { mode: 0o644 })
  const child = spawn(PGBOUNCER, [...process.getuid?.() === 0 ? ['-u', 'nobody'] : [], config], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { output += chunk })
  const killOnExit = (): void => { child.kill('SIGKILL') }
  process.once('exit', killOnExit)
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit')
      child.kill('SIGINT') // PgBouncer's "safe shutdown": waits for clients, which the tests have closed
      const timer = setTimeout(() => child.kill('SIGKILL'), 2_000)
      await exited
      clearTimeout(timer)
    }
    process.removeListener('exit', killOnExit)
    await rm(dir, { recursive: true, force: true })
  })
  const url = `postgres://${target.username || 'postgres'}@127.0.0.1:${port}/${database}`
  const deadline = Date.now() + START_MS
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited (${child.exitCode}):\n${output}`)
    const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 })
    probe.on('error', () => {})
    try {
      await probe.connect()
      await probe.query('SELECT 1')
      return { url }
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`pgbouncer did not answer on port ${port} in ${START_MS} ms (${(err as Error).message}):\n${output}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    } finally {
      await probe.end().catch(() => {})
    }
  }
}
