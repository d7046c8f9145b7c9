import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative, sep } from 'node:path'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { post, startServer } from '../../helpers/server-process.js'
import { ROOT } from '../../helpers/root.js'

// One npm command (a pack with its TypeScript build, or an install), on a loaded machine: about 8 s idle, but a CI run
// once saw the pack pass 120 s while the integration tier ran beside it. Two such steps still fit in tap's 600-s bound
// on a test file (package.json), which the timeouts below stay under.
const STEP_MS = 240_000
const EMAIL = 'ada@example.com'
const PASSWORD = 'correct horse battery staple'
const SECRET = 'a-pack-test-secret-of-at-least-32-bytes'
// What a git clone does not have; everything else is copied.
const NOT_IN_A_CLONE = new Set(['.git', 'node_modules', 'dist', '.tap', 'coverage', '.scratch'])
const PACKED = /^(dist\/lib\/.+\.(js|d\.ts)|README\.md|LICENSE|package\.json)$/

t.setTimeout(590_000)

const readme = await readFile(join(ROOT, 'README.md'), 'utf8')

t.test('the packed package installs in a new app and runs the README quick start, as ESM and CommonJS', { timeout: 580_000 }, async (t) => {
  const esm = quickStart('esm')
  const cjs = quickStart('cjs')
  for (const block of [esm, cjs]) t.ok(block.includes(EMAIL) && block.includes(PASSWORD), 'the block adds the account the test logs in with')

  const dir = await mkdtemp(join(tmpdir(), 'fpa-pack-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })

  // Packed from a copy without dist/, as a git install sees the repository: the prepare script must
  // build it. The repository's own dist/, which other test files read meanwhile, stays untouched.
  const source = join(dir, 'source')
  await cp(ROOT, source, { recursive: true, filter: (path) => !NOT_IN_A_CLONE.has(relative(ROOT, path).split(sep)[0]!) })
  await symlink(join(ROOT, 'node_modules'), join(source, 'node_modules'), 'dir')
  let started = Date.now()
  const [packed] = JSON.parse(await npm(source, 'pack', '--json', '--pack-destination', dir)) as Array<{ filename: string, files: Array<{ path: string }> }>
  t.comment(`packed (with its build) in ${Date.now() - started} ms`)
  const files = packed!.files.map((file) => file.path)
  t.same(files.filter((path) => !PACKED.test(path)), [], 'only the built lib, README, LICENSE and package.json are packed')
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string> | string> }
  const targets = Object.values(manifest.exports).flatMap((target) => typeof target === 'string' ? [target] : Object.values(target))
  for (const target of targets) t.ok(files.includes(target.replace(/^\.\//, '')), `${target} is packed`)

  const app = join(dir, 'app')
  await mkdir(app)
  await npm(app, 'init', '-y')
  started = Date.now()
  await npm(app, 'install', 'fastify', join(dir, packed!.filename), '--no-audit', '--no-fund', '--prefer-offline')
  t.comment(`installed in ${Date.now() - started} ms`)
  t.match(await npm(app, 'exec', '--', 'fastify-password-auth', 'schema', 'sqlite'), /^CREATE TABLE IF NOT EXISTS "auth_accounts"/, 'npx fastify-password-auth schema prints the DDL')

  const script = join(app, 'quick-start.js')
  await writeFile(script, cjs)
  await t.test('CommonJS, in a plain `npm init -y` project', async (t) => { await logInAndOut(t, script) })
  await npm(app, 'pkg', 'set', 'type=module')
  await writeFile(script, esm)
  await t.test('ESM, after `npm pkg set type=module`', async (t) => { await logInAndOut(t, script) })
})

/** The fenced code block that follows `<!-- quick-start:<name> … -->` in README.md. */
function quickStart (name: string): string {
  const match = new RegExp(`<!-- quick-start:${name}\\b[^>]*-->\\s*\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``).exec(readme)
  if (match === null) throw new Error(`README.md has no fenced code block after <!-- quick-start:${name} -->`)
  return match[1]!
}

/** Runs the quick start on a free port, logs in with its account, uses the guarded route, logs out. */
async function logInAndOut (t: Test, script: string): Promise<void> {
  const server = await startServer(t, { JWT_SECRET: SECRET }, script)
  const login = await post(`${server.url}/Auth/Login`, { email: EMAIL, password: PASSWORD })
  t.equal(login.status, 200, 'login')
  const { accessToken } = await login.json() as { accessToken: string }
  const auth = { authorization: `Bearer ${accessToken}` }
  const me = async (): Promise<Response> => await fetch(`${server.url}/me`, { headers: auth, signal: AbortSignal.timeout(30_000) })
  const account = await me()
  t.equal(account.status, 200, 'the guarded route lets the token in')
  t.equal((await account.json() as { email: string }).email, EMAIL)
  t.equal((await post(`${server.url}/Auth/Logout`, undefined, auth)).status, 204, 'logout')
  t.equal((await me()).status, 401, 'the token died with the logout')
  await server.stop()
}

/**
 * npm in `cwd`, bounded, without the npm_* and tap settings of the run that started this test. A failure says which
 * command, after how long, and the end of what npm printed, so that a CI log shows why.
 */
async function npm (cwd: string, ...args: string[]): Promise<string> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm_|tap|_tapjs|node_options$|node_v8_coverage$)/i.test(name)))
  const started = Date.now()
  try {
    const { stdout } = await promisify(execFile)('npm', args, { cwd, env, timeout: STEP_MS, maxBuffer: 64 * 1024 * 1024 })
    return stdout
  } catch (error) {
    const { stdout = '', stderr = '', signal } = error as { stdout?: string, stderr?: string, signal?: string }
    const tail = (text: string): string => text.split('\n').slice(-30).join('\n')
    throw new Error(`npm ${args.join(' ')} failed after ${Date.now() - started} ms${signal === undefined || signal === null ? '' : ` (${signal})`}\n` +
      `stderr:\n${tail(stderr)}\nstdout:\n${tail(stdout)}`)
  }
}
