import t from 'tap'
import { EMAIL, NEW_PASSWORD, PASSWORD } from '../helpers/app.js'
import { accountApp } from '../helpers/account.js'
import { PASSKEYS, ORIGIN } from '../helpers/passkeys.js'
import { SoftAuthenticator } from '../helpers/soft-authenticator.js'

/** The account app with passkeys on, and ada's passkey registered with her session. */
async function withPasskey (t: Parameters<typeof accountApp>[0]) {
  const built = await accountApp(t, { passkeys: PASSKEYS })
  const { post, token } = built
  const access = await token()
  const key = new SoftAuthenticator({ origin: ORIGIN })
  const options = (await post('/Passkeys/RegisterOptions', access)).json()
  t.equal((await post('/Passkeys', access, { response: key.create(options), name: 'Laptop', password: PASSWORD })).statusCode, 201)
  const signIn = async () => await post('/LoginPasskey', undefined, { response: key.get((await post('/Passkeys/LoginOptions', undefined)).json()) })
  t.equal((await signIn()).statusCode, 200, 'the passkey signs in')
  return { ...built, access, key, signIn }
}

t.test('Export lists the account\'s passkeys; DeleteAccount removes them', async (t) => {
  const { app, access, key, signIn, post } = await withPasskey(t)
  const exported = await app.inject({ method: 'GET', url: '/Auth/Account/Export', headers: { authorization: `Bearer ${access}` } })
  t.equal(exported.statusCode, 200)
  t.match(exported.json().passkeys, [{ id: key.credentials[0]!.id, name: 'Laptop', backedUp: false }])
  t.notOk(JSON.stringify(exported.json()).includes('publicKey'), 'the owner\'s view, not the stored record')
  t.equal((await post('/DeleteAccount', access, { password: PASSWORD })).statusCode, 204)
  t.equal((await signIn()).statusCode, 401, 'the passkey of a deleted account signs in no more')
})

t.test('RevertEmailChange removes every passkey: a taker\'s passkey goes with the address', async (t) => {
  const { post, changeToken, message, access, signIn } = await withPasskey(t)
  const change = await changeToken(access, 'taker@example.net')
  t.equal((await post('/VerifyEmailChange', undefined, { token: change })).statusCode, 204)
  const revert = (await message('email_changed', EMAIL)).token!
  t.equal((await post('/RevertEmailChange', undefined, { token: revert, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD })).statusCode, 204)
  t.equal((await signIn()).statusCode, 401)
})

t.test('admin.removePasskeys removes them, ends the sessions and tells the owner', async (t) => {
  const { app, ada, access, signIn, me, messages, events } = await withPasskey(t)
  t.equal(await app.passwordAuth.admin.removePasskeys(ada.id, { admin: 'support:grace' }), true)
  t.equal((await signIn()).statusCode, 401)
  t.equal((await me(access)).statusCode, 401, 'the session ended')
  t.ok(messages.some((m) => m.type === 'passkey_removed' && m.to === EMAIL))
  t.ok(events.some((e) => e.type === 'admin.passkeys_removed' && e.accountId === ada.id))
  t.ok(events.some((e) => e.type === 'passkey.removed' && e.accountId === ada.id && e.count === 1))
})

t.test('admin.requirePasswordReset removes the passkeys as the reset would, whatever keepPasskeys says', async (t) => {
  const built = await accountApp(t, { passkeys: PASSKEYS, passwordReset: { keepPasskeys: true } })
  const { app, ada, post, token, events } = built
  const access = await token()
  const key = new SoftAuthenticator({ origin: ORIGIN })
  const options = (await post('/Passkeys/RegisterOptions', access)).json()
  t.equal((await post('/Passkeys', access, { response: key.create(options), password: PASSWORD })).statusCode, 201)
  t.equal(await app.passwordAuth.admin.requirePasswordReset(ada.id, { admin: 'support:grace' }), true)
  const signIn = await post('/LoginPasskey', undefined, { response: key.get((await post('/Passkeys/LoginOptions', undefined)).json()) })
  t.equal(signIn.statusCode, 401, 'the passkey signs in no more: until the reset nothing does')
  t.ok(events.some((e) => e.type === 'passkey.removed' && e.accountId === ada.id && e.count === 1))
})

t.test('admin.removePasskeys with nothing to remove tells nobody of a removal', async (t) => {
  const { app, ada, access, me, messages, events } = await (async () => {
    const built = await accountApp(t, { passkeys: PASSKEYS })
    return { ...built, access: await built.token() }
  })()
  t.equal(await app.passwordAuth.admin.removePasskeys(ada.id, { admin: 'support:grace' }), true)
  t.equal((await me(access)).statusCode, 401, 'the sessions end all the same')
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.notOk(messages.some((m) => m.type === 'passkey_removed'), 'no passkey_removed message')
  t.notOk(events.some((e) => e.type === 'passkey.removed'), 'no passkey.removed event')
  t.ok(events.some((e) => e.type === 'admin.passkeys_removed' && e.admin === 'support:grace'), 'the admin\'s action is recorded')
})
