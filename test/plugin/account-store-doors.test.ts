import { ESLint } from 'eslint'
import t from 'tap'
import { repoPath, ROOT } from '../helpers/root.js'

// The account store is read through stores/account-reads.ts and written through account/: the lint refuses it elsewhere.
const eslint = new ESLint({ cwd: ROOT, overrideConfigFile: repoPath('.ci/eslint.config.js') })

/** Lines 1–6 hold the store or call it; lines 7–9 only look alike (another store's create, the doors' own methods). */
const FIXTURE = `import type { AccountStore as Store } from '../stores/types.js'
export type Accounts = import('../stores/types.js').AccountStore
export const a = async (accounts: any) => await accounts.findById('id')
export const b = async (parts: any) => await parts.accounts.updatePasswordHash({})
export const c = async (parts: any) => await parts.accounts['delete']('id')
export class D { readonly #accounts: any; e = async () => await this.#accounts.findByEmail('a@example.com') }
export const f = async (sessions: any) => await sessions.create({})
export const g = async (accountService: any, request: any) => await accountService.findById(request, 'id')
export const h = async (accounts: any, request: any) => await accounts.byId(request, 'id')
`
const HOLDING = [1, 2, 3, 4, 5, 6]

/** The fixture's lines the rule refuses at `path` (a fixture that does not parse refuses nothing, so it fails too). */
async function refusedLines (path: string): Promise<number[] | string> {
  const [result] = await eslint.lintText(FIXTURE, { filePath: repoPath(path) })
  const fatal = result!.messages.find(({ fatal }) => fatal === true)
  if (fatal !== undefined) return fatal.message
  return [...new Set(result!.messages.filter(({ ruleId }) => ruleId === 'no-restricted-syntax').map(({ line }) => line))]
}

for (const path of ['lib/session/fixture.ts', 'lib/guard/fixture.ts', 'lib/passkeys/fixture.ts', 'lib/routes/sign-in/fixture.ts', 'lib/routes/options.ts', 'lib/throttle/fixture.ts']) {
  t.test(`${path}: naming the AccountStore type or calling its methods on \`accounts\` fails the lint`, async (t) => {
    t.same(await refusedLines(path), HOLDING)
  })
}

for (const path of ['lib/stores/fixture.ts', 'lib/stores/memory/fixture.ts', 'lib/account/fixture.ts', 'lib/plugin.ts', 'lib/options.ts', 'lib/index.ts']) {
  t.test(`${path}: a door or a wiring file may hold the account store`, async (t) => {
    t.same(await refusedLines(path), [])
  })
}
