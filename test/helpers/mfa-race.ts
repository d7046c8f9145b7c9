import type { LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { MemorySessionStore, type MfaStore, type OneTimeTokenStore, type SessionStore } from '../../lib/index.js'
import { decodeJwt, PASSWORD } from './app.js'
import { mfaApp, totpCode } from './mfa.js'

/**
 * A session store whose create() waits at a gate while it is armed: a Login held between its check and its session.
 * A proxy of `inner`, so the plugin sees what inner is (a memory store stays one: nothing is shared).
 */
export function gatedSessionStore (inner: SessionStore) {
  let gate: { reached: () => void, open: Promise<void> } | undefined
  const create: SessionStore['create'] = async (session, policy) => {
    const waiting = gate
    gate = undefined
    if (waiting !== undefined) {
      waiting.reached()
      await waiting.open
    }
    return await inner.create(session, policy)
  }
  const store = new Proxy(inner, {
    get (target, property) {
      if (property === 'create') return create
      const value = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
  /** Holds the next create(); resolves once it is held, with the function that lets it go. */
  const hold = async (): Promise<() => void> => {
    let release!: () => void
    const open = new Promise<void>((resolve) => { release = resolve })
    await new Promise<void>((resolve) => { gate = { reached: resolve, open } })
    return release
  }
  return { store, hold }
}

/**
 * A Login (`confirm`: the password, two factors off so far) or a LoginMfa (`disable`: a code, two factors on)
 * held just before its session is created, while the account's other session turns two factors on or off to
 * the end; then the held request goes on. Resolves its answer and what the test checks.
 */
export async function interleaveLoginWithSwitch (t: Test, kind: 'confirm' | 'disable',
  stores: { sessions?: SessionStore, mfaStore?: MfaStore, oneTimeTokens?: OneTimeTokenStore } = {}) {
  const gated = gatedSessionStore(stores.sessions ?? new MemorySessionStore())
  const app = await mfaApp(t, {
    sessions: gated.store,
    ...stores.mfaStore === undefined ? {} : { mfa: { store: stores.mfaStore } },
    ...stores.oneTimeTokens === undefined ? {} : { oneTimeTokens: stores.oneTimeTokens }
  })
  const { post, ada } = app
  let racing: Promise<LightMyRequestResponse>
  let switching: () => Promise<LightMyRequestResponse>
  let switchedBy: string
  if (kind === 'confirm') {
    const accessToken = await app.token()
    switchedBy = decodeJwt(accessToken).payload.sid as string
    const { secret } = (await post('/Mfa/Setup', accessToken)).json()
    switching = async () => await post('/Mfa/Confirm', accessToken, { code: totpCode(secret), password: PASSWORD })
    const held = gated.hold()
    racing = app.login()
    const release = await held
    const switched = await switching()
    t.equal(switched.statusCode, 200, 'Confirm ran to its end while the Login was held')
    release()
  } else {
    const { accessToken, recoveryCodes } = await app.enable()
    switchedBy = decodeJwt(accessToken).payload.sid as string
    const mfaToken = await app.challenge()
    const held = gated.hold()
    racing = app.loginMfa(mfaToken, recoveryCodes[0])
    const release = await held
    const switched = await post('/Mfa/Disable', accessToken, { code: recoveryCodes[1], password: PASSWORD })
    t.equal(switched.statusCode, 204, 'Disable ran to its end while the LoginMfa was held')
    release()
  }
  const login = await racing
  const token = login.statusCode === 200 ? login.json().accessToken as string | undefined : undefined
  return { login, me: token === undefined ? undefined : (await app.me(token)).statusCode, sessions: gated.store, ada, switchedBy }
}
