import t, { type Test } from 'tap'
import { MemoryPasskeyStore } from '../../lib/index.js'
import { accountApp } from '../helpers/account.js'
import { EMAIL, NEW_PASSWORD, PASSWORD } from '../helpers/app.js'
import { ORIGIN, PASSKEYS } from '../helpers/passkeys.js'
import { SoftAuthenticator } from '../helpers/soft-authenticator.js'

/*
 * Contract §18: a registration that passed the guard while every passkey of the account is being removed (a reset,
 * a revert, admin.removePasskeys, admin.requirePasswordReset) must not leave a passkey that signs in. Each removal
 * is made to land at one of the three places a registration in flight can be: just after the guard read the
 * account, just before the passkey is stored, and inside the removal itself, right after it removed the passkeys
 * (before a reset or revert advanced the credential version, before an admin ended the sessions).
 */

type App = Awaited<ReturnType<typeof accountApp>>
/** Gets a removal ready (a reset link, an address change), given the session's token; resolves the removal. */
type Removal = (app: App, access: string) => Promise<() => Promise<unknown>>

const REMOVALS: Record<string, Removal> = {
  ResetPassword: async ({ post, message }) => {
    if ((await post('/ForgotPassword', undefined, { email: EMAIL })).statusCode !== 202) throw new Error('ForgotPassword')
    const { token } = await message('password_reset', EMAIL)
    return async () => await post('/ResetPassword', undefined, { token, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })
  },
  // The taker's session (the one that asked for the change) outlives the change; the owner's revert removes its passkeys.
  RevertEmailChange: async ({ post, changeToken, message }, access) => {
    if ((await post('/VerifyEmailChange', undefined, { token: await changeToken(access, 'taker@example.net') })).statusCode !== 204) throw new Error('VerifyEmailChange')
    const { token } = await message('email_changed', EMAIL)
    return async () => await post('/RevertEmailChange', undefined, { token, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })
  },
  'admin.removePasskeys': async ({ app, ada }) => async () => await app.passwordAuth.admin.removePasskeys(ada.id, { admin: 'support:grace' }),
  'admin.requirePasswordReset': async ({ app, ada }) => async () => await app.passwordAuth.admin.requirePasswordReset(ada.id, { admin: 'support:grace' })
}

type Window = 'after the guard' | 'before the store' | 'inside the removal'
const WINDOWS: Window[] = ['after the guard', 'before the store', 'inside the removal']

async function race (t: Test, removalName: string, window: Window): Promise<void> {
  const passkeyStore = new MemoryPasskeyStore()
  const app = await accountApp(t, { passkeys: { ...PASSKEYS, store: passkeyStore } })
  const { post, token, accounts, ada, events } = app
  const access = await token()
  const remove = await REMOVALS[removalName]!(app, access)
  const key = new SoftAuthenticator({ origin: ORIGIN })
  const options = (await post('/Passkeys/RegisterOptions', access)).json()
  const response = key.create(options)
  const register = async () => await post('/Passkeys', access, { response, password: PASSWORD })

  // Each hook runs once, when the request gets there, and lets the request go on when the removal is done.
  let hook: (() => Promise<void>) | undefined
  const once = async (): Promise<void> => { const run = hook; hook = undefined; await run?.() }
  const findById = accounts.findById.bind(accounts)
  const add = passkeyStore.add.bind(passkeyStore)
  const removeAll = passkeyStore.removeAll.bind(passkeyStore)
  let armedFindById = false
  accounts.findById = async (id) => {
    const found = await findById(id)
    if (armedFindById) { armedFindById = false; await once() }
    return found
  }
  passkeyStore.add = async (...args) => { if (window === 'before the store') await once(); return await add(...args) }
  passkeyStore.removeAll = async (...args) => {
    const removed = await removeAll(...args)
    if (window === 'inside the removal') await once()
    return removed
  }

  let registered: Awaited<ReturnType<typeof register>> | undefined
  if (window === 'inside the removal') {
    hook = async () => { registered = await register() }
    await remove()
    t.ok(registered, 'the registration ran inside the removal')
  } else {
    hook = async () => { await remove() }
    armedFindById = window === 'after the guard'
    registered = await register()
    t.equal(hook, undefined, 'the removal ran while the registration was in flight')
  }
  t.ok(registered !== undefined && [201, 400, 401].includes(registered.statusCode), `answered ${registered?.statusCode}: ${registered?.body}`)
  if (window === 'before the store') {
    t.equal(registered?.statusCode, 400)
    t.equal(registered?.json().code, 'FST_PWAUTH_PASSKEY_INVALID')
    t.ok(events.some((e) => e.type === 'passkey.failed' && e.reason === 'outrun'), 'passkey.failed, outrun')
  }
  t.same(await passkeyStore.list(ada.id), [], 'no passkey stored after the removal')
  const signIn = await post('/LoginPasskey', undefined, { response: key.get((await post('/Passkeys/LoginOptions', undefined)).json()) })
  t.equal(signIn.statusCode, 401, 'the late passkey signs nobody in')
}

for (const removal of Object.keys(REMOVALS)) {
  for (const window of WINDOWS) {
    t.test(`a registration in flight loses to ${removal}, landing ${window}`, async (t) => { await race(t, removal, window) })
  }
}

t.test('with nothing removed in between, the registration of that generation stands', async (t) => {
  const app = await accountApp(t, { passkeys: PASSKEYS })
  const { post, token, app: fastify, ada } = app
  // A removal with nothing to remove, then a registration: the generation it read is the current one.
  await fastify.passwordAuth.admin.removePasskeys(ada.id, { admin: 'support:grace' })
  const access = await token()
  const key = new SoftAuthenticator({ origin: ORIGIN })
  const options = (await post('/Passkeys/RegisterOptions', access)).json()
  t.equal((await post('/Passkeys', access, { response: key.create(options), password: PASSWORD })).statusCode, 201)
  const signIn = await post('/LoginPasskey', undefined, { response: key.get((await post('/Passkeys/LoginOptions', undefined)).json()) })
  t.equal(signIn.statusCode, 200)
})
