import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import t from 'tap'
import type { AuthClient, AuthError, ProblemCode, SessionView, TokenAnswer } from '../../lib/client/index.js'

// fastify-password-auth/client as a browser gets it: the files of dist/lib/client, nothing else.
const require = createRequire(import.meta.url)
const entry = require.resolve('fastify-password-auth/client')
const dir = dirname(entry)
const files = readdirSync(dir).filter((name) => name.endsWith('.js'))
const text = (name: string): string => readFileSync(join(dir, name), 'utf8')

t.test('the subpath export resolves to the built client, with its types', async (t) => {
  t.match(entry, /dist[\\/]lib[\\/]client[\\/]index\.js$/)
  t.ok(readdirSync(dir).includes('index.d.ts'))
})

t.test('no runtime dependency: the client imports only its own files, and @simplewebauthn/browser on first passkey use', async (t) => {
  for (const name of files) {
    const imports = [...text(name).matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]/g)].map((match) => match[1]!)
    t.same(imports.filter((specifier) => !/^\.\/[\w-]+\.js$/.test(specifier)), [], `${name}: only ./*.js`)
    const dynamic = [...text(name).matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((match) => match[1]!)
    t.same(dynamic, name === 'passkeys.js' ? ['@simplewebauthn/browser'] : [], `${name}: dynamic imports`)
    t.notMatch(text(name), /\brequire\(|node:/, `${name}: nothing of Node`)
  }
})

t.test('at most 10 kB gzip, @simplewebauthn/browser aside', async (t) => {
  const all = files.map(text).join('\n')
  const size = gzipSync(all, { level: 9 }).length
  t.comment(`${files.length} files, ${all.length} bytes, ${size} bytes gzip`)
  t.ok(size <= 10 * 1024, `${size} bytes gzip`)
})

// Compile-time: the client's types are the routes' own (lib/client/types.ts). These lines stop compiling when a
// route's body or answer changes under them.
type Assert<T extends true> = T
type _LoginTakes = Assert<Parameters<AuthClient['login']>[0] extends { email: string, password: string } ? true : false>
type _TokenAnswer = Assert<TokenAnswer extends { accessToken: string, expiresIn: number, tokenType: 'Bearer' } ? true : false>
type _Sessions = Assert<Awaited<ReturnType<AuthClient['sessions']['list']>> extends SessionView[] ? true : false>
type _Codes = Assert<'FST_PWAUTH_INVALID_CREDENTIALS' | 'FST_PWAUTH_REFRESH_TOKEN_INVALID' extends ProblemCode ? true : false>
type _ErrorCode = Assert<AuthError['code'] extends ProblemCode | 'NETWORK_ERROR' | 'TIMEOUT' | 'UNEXPECTED_ANSWER' | 'PASSKEY_UNAVAILABLE' ? true : false>
// @ts-expect-error a code the plugin does not have
const _notACode: ProblemCode = 'FST_PWAUTH_NO_SUCH_CODE'
export type { _Codes, _ErrorCode, _LoginTakes, _Sessions, _TokenAnswer }
export { _notACode }
