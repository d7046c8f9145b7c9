import { readdirSync } from 'node:fs'
import { ESLint } from 'eslint'
import t from 'tap'
import { repoPath, ROOT, ROOT_URL } from '../helpers/root.js'

// lib/'s rooms form a ladder that the lint keeps: an import from a room on the same floor or above fails `npm run lint`.
const CONFIG = '.ci/eslint.config.js'
const { LADDER } = await import(new URL(CONFIG, ROOT_URL).href) as { LADDER: string[][] }
const eslint = new ESLint({ cwd: ROOT, overrideConfigFile: repoPath(CONFIG) })

const entries = readdirSync(repoPath('lib'), { withFileTypes: true })
const isFolder = new Map(entries.map((entry) => [entry.name.replace(/\.ts$/, ''), entry.isDirectory()]))
const floorOf = (room: string): number => LADDER.findIndex((floor) => floor.includes(room))

/** A file of `room`, `depth` folders below lib/, importing (type-only and as values) every other room. */
function importsOfEveryRoom (room: string, depth: number): { text: string, targets: string[] } {
  const up = depth === 0 ? './' : '../'.repeat(depth)
  const targets = [...isFolder.keys()].filter((other) => other !== room)
  const lines = targets.map((other, i) =>
    `import ${i % 2 === 0 ? 'type ' : ''}{ x${i} } from '${up}${other}${isFolder.get(other)! ? '/some-file.js' : '.js'}'`)
  return { text: lines.join('\n') + '\n', targets }
}

async function flagged (path: string, text: string): Promise<Array<{ line: number, ruleId: string | null }>> {
  const [result] = await eslint.lintText(text, { filePath: repoPath(path) })
  return result!.messages.filter(({ ruleId }) => ruleId === 'no-restricted-imports')
}

t.test('every top-level room of lib/ is on the ladder, and lib/ keeps to 17 of them', async (t) => {
  t.same([...isFolder.keys()].filter((room) => floorOf(room) === -1), [])
  t.ok(isFolder.size <= 17, `${isFolder.size} rooms`)
})

for (const room of isFolder.keys()) {
  for (const depth of isFolder.get(room)! ? [1, 2] : [0]) {
    const path = isFolder.get(room)! ? `lib/${room}/${'nested/'.repeat(depth - 1)}fixture.ts` : `lib/${room}.ts`
    t.test(`${path}: importing a room on floor ${floorOf(room)} or above fails the lint, below passes`, async (t) => {
      const { text, targets } = importsOfEveryRoom(room, depth)
      const lines = new Set((await flagged(path, text)).map(({ line }) => line))
      const refused = targets.filter((_, i) => lines.has(i + 1))
      t.same(refused, targets.filter((other) => floorOf(other) <= floorOf(room)), `refused: ${refused.join(', ') || 'none'}`)
    })
  }
}

t.test('a relative import that stays inside a room, or goes down, is not mistaken for one going up', async (t) => {
  // lib/stores/postgres/x.ts: '../index.js' would be lib/stores/index.ts, not lib/index.ts.
  t.same(await flagged('lib/stores/postgres/fixture.ts', "import { x } from '../index.js'\nimport { y } from '../../common/errors.js'\n"), [])
  t.equal((await flagged('lib/stores/postgres/fixture.ts', "export { x } from '../../index.js'\n")).length, 1, 'export … from counts too')
})
