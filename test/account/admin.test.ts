import t from 'tap'
import { MemoryActivityStore } from '../../lib/index.js'
import { EMAIL, NEW_PASSWORD, PASSWORD, changeBody } from '../helpers/app.js'
import { accountApp } from '../helpers/account.js'
import { expectProblem } from '../helpers/problem.js'

t.test('requirePasswordReset: every session ends, the old password logs nobody in, a reset link goes out (Better Auth #9855)', async (t) => {
  const { app, tokens, login, me, refresh, post, message, events, ada, changePassword, messages } = await accountApp(t)
  const first = await tokens()
  const second = await tokens()
  t.equal(await app.passwordAuth.admin.requirePasswordReset(ada.id, { admin: 'support:grace' }), true)
  for (const session of [first, second]) {
    t.equal((await me(session.accessToken)).statusCode, 401, 'the access token died')
    t.equal((await refresh(session.refreshToken)).statusCode, 401, 'the refresh token died')
  }
  const link = await message('password_reset', EMAIL)
  t.ok(events.some((e) => e.type === 'admin.password_reset_required' && e.admin === 'support:grace' && e.sessionsEnded === 2), 'the event names the admin')

  // The right password: 403, nothing issued, and (after it verified only) another link. A wrong one: Login's 401.
  const before = messages.length
  const refused = await login(EMAIL, PASSWORD)
  expectProblem(t, refused, 403, 'FST_PWAUTH_PASSWORD_RESET_REQUIRED')
  t.notOk('accessToken' in refused.json(), 'issues nothing')
  expectProblem(t, await login(EMAIL, 'a wrong password here'), 401, 'FST_PWAUTH_INVALID_CREDENTIALS', 'without the password: the plain 401')
  expectProblem(t, await changePassword(changeBody()), 403, 'FST_PWAUTH_PASSWORD_RESET_REQUIRED')
  for (let i = 0; i < 100 && messages.length < before + 2; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(messages.slice(before).filter((m) => m.type === 'password_reset').length, 2, 'each refusal sends a reset link, as ForgotPassword would')
  t.ok(events.some((e) => e.type === 'password.reset_required' && e.route === 'Login' && e.reason === 'admin'))

  // The reset restores the account; the old password stays dead.
  const latest = messages.filter((m) => m.type === 'password_reset').at(-1)!
  t.not(latest.token, link.token)
  t.equal((await post('/ResetPassword', undefined, { token: latest.token, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })).statusCode, 204)
  t.equal((await login(EMAIL, NEW_PASSWORD)).statusCode, 200)
  expectProblem(t, await login(EMAIL, PASSWORD), 401, 'FST_PWAUTH_INVALID_CREDENTIALS')
})

t.test('requirePasswordReset: Reauthenticate refuses too; an unknown account is false; a missing admin or resets off fail loudly', async (t) => {
  const { app, token, post, ada } = await accountApp(t)
  const access = await token()
  t.equal(await app.passwordAuth.admin.requirePasswordReset('no-such-account', { admin: 'a' }), false)
  await t.rejects(app.passwordAuth.admin.requirePasswordReset(ada.id, undefined as never), /needs \{ admin \}/)
  await t.rejects(app.passwordAuth.admin.requirePasswordReset(ada.id, { admin: ' ' }), /needs \{ admin \}/)
  // A session started after the mark (the host's own sign-in) still meets the refusal where the password is checked.
  t.equal(await app.passwordAuth.admin.requirePasswordReset(ada.id, { admin: 'ops' }), true)
  const later = (await app.passwordAuth.sessions.start(ada.id, { request: { log: app.log, ip: '127.0.0.1', headers: {} } as never, reply: { header: () => {} } as never }))!.accessToken
  expectProblem(t, await post('/Reauthenticate', later, { password: PASSWORD }), 403, 'FST_PWAUTH_PASSWORD_RESET_REQUIRED')
  t.equal((await post('/Reauthenticate', access, { password: PASSWORD })).statusCode, 401, 'the old session is gone')

  const { buildTestApp } = await import('../helpers/app.js')
  const plain = await buildTestApp(t)
  await t.rejects(plain.app.passwordAuth.admin.requirePasswordReset(plain.ada.id, { admin: 'ops' }), /needs passwordReset/)
  t.equal((await plain.login()).statusCode, 200, 'nothing changed')
})

t.test('unblock clears the e-mail\'s attempt counter; resetSecondFactor ends sessions and tells the owner; removePasskeys says passkeys are not configured', async (t) => {
  const { app, login, events, ada } = await accountApp(t, { throttle: { freeFailures: 2 } })
  for (let i = 0; i < 2; i++) await login(EMAIL, 'a wrong password here')
  expectProblem(t, await login(EMAIL, PASSWORD), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS')
  await app.passwordAuth.admin.unblock(' Ada@Example.com ', { admin: 'support:grace' })
  t.equal((await login(EMAIL, PASSWORD)).statusCode, 200)
  t.ok(events.some((e) => e.type === 'admin.unblocked' && e.admin === 'support:grace' && e.email === EMAIL))
  await t.rejects(app.passwordAuth.admin.removePasskeys(ada.id, { admin: 'ops' }), /passkeys are not configured/)
  await t.rejects(app.passwordAuth.admin.resetSecondFactor(ada.id, { admin: 'ops' }), /two factors are not configured/)

  const { mfaApp } = await import('../helpers/mfa.js')
  const mfa = await mfaApp(t)
  const { accessToken } = await mfa.enable()
  t.equal(await mfa.app.passwordAuth.admin.resetSecondFactor(mfa.ada.id, { admin: 'support:grace' }), true)
  t.equal((await mfa.me(accessToken)).statusCode, 401, 'the session ended')
  t.ok(mfa.messages.some((m) => m.type === 'mfa_disabled' && m.to === EMAIL))
  const relogin = await mfa.login()
  t.equal(relogin.statusCode, 200)
  t.ok('accessToken' in relogin.json(), 'the password alone signs in again: no second step')
  t.ok(mfa.events.some((e) => e.type === 'admin.second_factor_reset' && e.admin === 'support:grace'))
  t.equal(mfa.events.filter((e) => e.type === 'mfa.disabled').length, 1, 'mfa.disabled, as the owner\'s Disable emits it')

  // Again, with two factors already off: nothing was removed, so nobody is told of a removal.
  t.equal(await mfa.app.passwordAuth.admin.resetSecondFactor(mfa.ada.id, { admin: 'support:grace' }), true)
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(mfa.messages.filter((m) => m.type === 'mfa_disabled').length, 1, 'no second mfa_disabled')
  t.equal(mfa.events.filter((e) => e.type === 'mfa.disabled').length, 1, 'no second mfa.disabled')
  t.equal(mfa.events.filter((e) => e.type === 'admin.second_factor_reset').length, 2, 'the admin\'s action is recorded each time')
})

t.test('activity: the account\'s recent events from the memory ring, newest first, without tokens or passwords', async (t) => {
  const activity = new MemoryActivityStore({ maxRecords: 50 })
  const { app, tokens, login, ada, post, message } = await accountApp(t, { admin: { activity } })
  const session = await tokens()
  await login(EMAIL, 'a wrong password here')
  await post('/ForgotPassword', undefined, { email: EMAIL })
  const reset = await message('password_reset', EMAIL)
  await app.passwordAuth.admin.requirePasswordReset(ada.id, { admin: 'support:grace' })
  const records = await app.passwordAuth.admin.activity(ada.id)
  const types = records.map((r) => r.type)
  t.equal(types[0], 'admin.password_reset_required', 'newest first')
  for (const type of ['login.succeeded', 'login.failed', 'password.reset_requested', 'session.ended']) t.ok(types.includes(type), type)
  t.ok(records.every((r) => r.accountId === ada.id && typeof r.time === 'number'))
  const text = JSON.stringify(records)
  for (const secret of [session.accessToken, session.refreshToken, reset.token!, PASSWORD, 'a wrong password here', '$argon2']) t.notOk(text.includes(secret), 'no secret in the activity')
  t.equal((await app.passwordAuth.admin.activity(ada.id, { limit: 2 })).length, 2)
  await t.rejects(app.passwordAuth.admin.activity(ada.id, { limit: 0 }), /limit/)
  t.same(await app.passwordAuth.admin.activity('someone-else'), [])
})

const record = (accountId: string, type: string, details: Record<string, unknown> = {}, time = Date.now()) => ({ type, time, accountId, details })
const typesOf = async (store: MemoryActivityStore, accountId: string) => (await store.list(accountId, 100)).map((r) => r.type)

t.test('the memory store: newest first, nothing past its retention, its own copies, and forget() of one account', async (t) => {
  const store = new MemoryActivityStore({ retentionMs: 1000 })
  const nested = { browser: 'Firefox' }
  for (let i = 0; i < 6; i++) await store.add(record(i % 2 === 0 ? 'a' : 'b', `e${i}`, { i, device: nested }))
  nested.browser = 'changed after add'
  t.same(await typesOf(store, 'a'), ['e4', 'e2', 'e0'], 'newest first')
  t.same(await typesOf(store, 'b'), ['e5', 'e3', 'e1'])
  t.same((await store.list('a', 1))[0]?.details, { i: 4, device: { browser: 'Firefox' } }, 'nested details copied when kept')
  t.equal((await store.list('a', 2)).length, 2)
  await store.add(record('c', 'old', {}, Date.now() - 2000))
  t.same(await store.list('c', 10), [], 'past its retention')
  await store.forget('a')
  t.same(await store.list('a', 10), [])
  t.same(await typesOf(store, 'b'), ['e5', 'e3', 'e1'], 'the other account\'s records stay in order')
  const listed = await store.list('b', 1)
  listed[0]!.details.extra = true
  t.same((await store.list('b', 1))[0]?.details, { i: 5, device: { browser: 'Firefox' } }, 'a listed record is the caller\'s copy')
  t.throws(() => new MemoryActivityStore({ retentionMs: 10 }), /retentionMs/)
  t.throws(() => new MemoryActivityStore({ maxRecords: 0 }), /maxRecords/)
  t.throws(() => new MemoryActivityStore({ maxPerType: 0.5 }), /maxPerType/)
})

t.test('issue 37: the memory store bounds each account and event type; a flood pushes out only older records of its own kind', async (t) => {
  const store = new MemoryActivityStore({ maxRecords: 100, maxPerType: 5 })
  await store.add(record('ada', 'password.changed'))
  await store.add(record('ada', 'login.succeeded'))
  for (let i = 0; i < 1000; i++) await store.add(record('bob', 'session.reauthenticated', { i }))
  t.same(await typesOf(store, 'ada'), ['login.succeeded', 'password.changed'], 'another account\'s flood pushed out none of ada\'s records')
  t.same((await store.list('bob', 100)).map((r) => r.details.i), [999, 998, 997, 996, 995], 'bob keeps his newest 5 of that kind')
  // A stranger's failed logins name ada's account: they replace only older failures.
  for (let i = 0; i < 1000; i++) await store.add(record('ada', 'login.failed', { i }))
  t.same(await typesOf(store, 'ada'), ['login.failed', 'login.failed', 'login.failed', 'login.failed', 'login.failed', 'login.succeeded', 'password.changed'],
    'her own sign-in and password change stay')
})

t.test('a full memory store keeps nothing new rather than drop another account\'s records; records past the retention make room', async (t) => {
  const store = new MemoryActivityStore({ maxRecords: 4, maxPerType: 2, retentionMs: 1000 })
  await store.add(record('ada', 'login.succeeded'))
  await store.add(record('ada', 'password.changed'))
  await store.add(record('bob', 'login.succeeded'))
  await store.add(record('bob', 'login.succeeded'))
  await store.add(record('eve', 'login.failed'))
  t.same(await typesOf(store, 'eve'), [], 'full: a new account\'s record is not kept')
  await store.add(record('bob', 'logout'))
  t.same(await typesOf(store, 'bob'), ['login.succeeded', 'login.succeeded'], 'nor a new kind of an account\'s')
  await store.add(record('bob', 'login.succeeded', { newest: true }))
  t.same((await store.list('bob', 1))[0]?.details, { newest: true }, 'in place of its own older record of that kind: kept')
  t.same(await typesOf(store, 'ada'), ['password.changed', 'login.succeeded'], 'ada\'s records untouched')
  await store.forget('ada')
  await store.add(record('eve', 'login.failed'))
  t.same(await typesOf(store, 'eve'), ['login.failed'], 'room again once an account is forgotten')

  const expiring = new MemoryActivityStore({ maxRecords: 2, retentionMs: 1000 })
  await expiring.add(record('ada', 'login.succeeded', {}, Date.now() - 2000))
  await expiring.add(record('bob', 'login.succeeded', {}, Date.now() - 2000))
  await expiring.add(record('eve', 'login.succeeded'))
  t.same(await typesOf(expiring, 'eve'), ['login.succeeded'], 'records past their retention were swept to make room')
})

t.test('issue 37: refreshes are not activity: 60 refreshes of bob\'s session leave ada\'s records in a store of 50', async (t) => {
  const activity = new MemoryActivityStore({ maxRecords: 50 })
  const { app, tokens, login, ada, accounts, refresh } = await accountApp(t, { admin: { activity } })
  await tokens()
  t.equal((await login(EMAIL, 'a wrong password here')).statusCode, 401)
  const before = (await app.passwordAuth.admin.activity(ada.id)).map((r) => r.type)
  t.ok(before.includes('login.succeeded') && before.includes('login.failed'))
  const bob = accounts.add({ email: 'bob@example.com', passwordHash: ada.passwordHash })
  let { refreshToken } = (await login('bob@example.com', PASSWORD)).json()
  for (let i = 0; i < 60; i++) {
    const refreshed = await refresh(refreshToken)
    t.equal(refreshed.statusCode, 200)
    refreshToken = refreshed.json().refreshToken
  }
  await refresh('not a refresh token')
  t.same((await app.passwordAuth.admin.activity(ada.id)).map((r) => r.type), before, 'ada\'s activity is whole')
  const bobs = (await app.passwordAuth.admin.activity(bob.id)).map((r) => r.type)
  t.notOk(bobs.some((type) => type.startsWith('session.refresh')), 'no refresh is recorded')
  t.ok(bobs.includes('login.succeeded'))
})

t.test('deleteAccount: DeleteAccount\'s deletion for support, without the route, beforeDelete or the account\'s password', async (t) => {
  const { app, tokens, login, me, refresh, events, messages, ada, accounts } = await accountApp(t, {
    account: { deletion: true, beforeDelete: () => ({ refuse: 'the route asks this, the admin does not' }) }
  })
  const session = await tokens()
  t.equal(await app.passwordAuth.admin.deleteAccount(ada.id, { admin: 'support:grace' }), true)
  t.equal(await accounts.findById(ada.id), null, 'the account is gone')
  t.equal((await me(session.accessToken)).statusCode, 401, 'the access token died')
  t.equal((await refresh(session.refreshToken)).statusCode, 401, 'the refresh token died')
  expectProblem(t, await login(EMAIL, PASSWORD), 401, 'FST_PWAUTH_INVALID_CREDENTIALS')
  t.ok(events.some((e) => e.type === 'account.deleted' && e.accountId === ada.id && !('leftovers' in e)), 'forgotten everywhere')
  t.ok(events.some((e) => e.type === 'admin.account_deleted' && e.admin === 'support:grace' && e.accountId === ada.id), 'the event names the admin')
  t.notOk(events.some((e) => e.type === 'account.delete_refused'), 'beforeDelete was not asked')
  t.equal(messages.filter((m) => m.type === 'account_deleted' && m.to === EMAIL).length, 1, 'the owner is told')
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.same(await app.passwordAuth.admin.activity(ada.id), [], 'its activity went with it, the admin\'s event included')

  t.equal(await app.passwordAuth.admin.deleteAccount(ada.id, { admin: 'support:grace' }), false, 'gone already')
  t.equal(events.filter((e) => e.type === 'admin.account_deleted').length, 1, 'no event for what was not deleted')
  await t.rejects(app.passwordAuth.admin.deleteAccount('x', undefined as never), /needs \{ admin \}/)
  await t.rejects(app.passwordAuth.admin.deleteAccount('' as never, { admin: 'ops' }), /needs an account id/)
})

t.test('deleteAccount: works with the DeleteAccount route off; fails loudly while the account store cannot delete', async (t) => {
  const { buildTestApp } = await import('../helpers/app.js')
  const plain = await buildTestApp(t)
  t.equal(await plain.app.passwordAuth.admin.deleteAccount(plain.ada.id, { admin: 'ops' }), true, 'account.deletion is not needed')
  expectProblem(t, await plain.login(), 401, 'FST_PWAUTH_INVALID_CREDENTIALS')

  const { MemoryAccountStore } = await import('../../lib/index.js')
  const store = new MemoryAccountStore()
  const kept = store.add({ email: 'kept@example.com', passwordHash: '$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA' })
  const withoutDelete = Object.fromEntries(['findByEmail', 'findById', 'updatePasswordHash'].map((name) => [name, (store as unknown as Record<string, Function>)[name]!.bind(store)]))
  const noDelete = await buildTestApp(t, { auth: { accounts: withoutDelete as never } })
  await t.rejects(noDelete.app.passwordAuth.admin.deleteAccount(kept.id, { admin: 'ops' }), /needs an account store with delete\(\)/)
  t.not(await store.findById(kept.id), null, 'nothing deleted')
})
