import { readFile } from 'node:fs/promises'
import { builtinModules } from 'node:module'
import { dirname, resolve } from 'node:path'
import t from 'tap'
import { ROOT } from '../helpers/root.js'

const root = ROOT
const pkg = JSON.parse(await readFile(resolve(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }

/** The bare module names a built entry point loads at runtime, following its relative imports. */
async function runtimeImports (entry: string): Promise<Set<string>> {
  const seen = new Set<string>()
  const bare = new Set<string>()
  const visit = async (file: string): Promise<void> => {
    if (seen.has(file)) return
    seen.add(file)
    const source = await readFile(file, 'utf8')
    for (const [, specifier] of source.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm)) {
      if (specifier === undefined) continue
      if (specifier.startsWith('.')) await visit(resolve(dirname(file), specifier))
      else bare.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!)
    }
  }
  await visit(resolve(root, entry))
  return bare
}

const allowed = (extra: string[]) => (name: string) =>
  name.startsWith('node:') || builtinModules.includes(name) || name in pkg.dependencies || extra.includes(name)

for (const [entry, extra] of [
  ['dist/lib/index.js', ['fastify']],
  ['dist/lib/stores/testing/index.js', []],
  ['dist/lib/stores/redis/index.js', ['ioredis']],
  ['dist/lib/stores/postgres/index.js', ['pg']]
] as const) {
  t.test(`${entry} loads only its dependencies${extra.length > 0 ? ` and ${extra.join(', ')}` : ''}`, async (t) => {
    const imports = await runtimeImports(entry)
    t.same([...imports].filter((name) => !allowed([...extra])(name)), [])
  })
}

t.test('the main entry never loads pg or ioredis: memory and custom stores need neither', async (t) => {
  const imports = await runtimeImports('dist/lib/index.js')
  t.ok(imports.has('@node-rs/argon2') && imports.has('@fastify/jwt'), 'the scan follows the import graph')
  t.notOk(imports.has('pg'))
  t.notOk(imports.has('ioredis'))
})

t.test('@simplewebauthn/server is loaded on first use only: a host without passkeys never loads it', async (t) => {
  const imports = await runtimeImports('dist/lib/index.js')
  t.notOk(imports.has('@simplewebauthn/server'))
  const source = await readFile(resolve(root, 'dist/lib/passkeys/webauthn.js'), 'utf8')
  t.match(source, /import\('@simplewebauthn\/server'\)/, 'a dynamic import')
  t.ok('@simplewebauthn/server' in pkg.dependencies)
})
