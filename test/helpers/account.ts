import type { Test } from 'tap'
import type { AuthEvent, PasswordAuthOptions } from '../../lib/index.js'
import type { PasswordAuthMessage } from '../../lib/messages/outbox.js'
import { buildTestApp, PASSWORD, type TestAppOptions } from './app.js'

export const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/**
 * An app with account self-service on (e-mail change, deletion, export), resets and the session routes, whose
 * messages and events the test reads.
 */
export async function accountApp (t: Test, auth: Partial<PasswordAuthOptions> = {}, options: Omit<TestAppOptions, 'auth'> = {}) {
  const messages: PasswordAuthMessage[] = []
  const events: AuthEvent[] = []
  const built = await buildTestApp(t, {
    ...options,
    auth: {
      account: { emailChange: true, deletion: true, export: true },
      passwordReset: true,
      sessionRoutes: true,
      deliver: (message) => { messages.push(message) },
      onEvent: (event) => { events.push(event) },
      ...auth
    }
  })
  const { app } = built
  const post = async (url: string, token: string | undefined, payload?: Record<string, unknown>) =>
    await app.inject({ method: 'POST', url: `/Auth${url}`, headers: token === undefined ? {} : { authorization: `Bearer ${token}` }, ...payload === undefined ? {} : { payload } })
  /** Waits (up to 2 s) for a message of `type` to `to`; resolves the newest. */
  const message = async (type: string, to: string): Promise<PasswordAuthMessage> => {
    for (let i = 0; i < 200; i++) {
      const found = messages.filter((m) => m.type === type && m.to === to).at(-1)
      if (found !== undefined) return found
      await sleep(10)
    }
    throw new Error(`no ${type} message to ${to}`)
  }
  /** Asks for a change to `newEmail` with `token`'s session and the account's `password`, and resolves the link's token. */
  const changeToken = async (token: string, newEmail: string, password = PASSWORD): Promise<string> => {
    const before = messages.filter((m) => m.type === 'email_change' && m.to === newEmail).length
    const response = await post('/ChangeEmail', token, { newEmail, password })
    if (response.statusCode !== 202) throw new Error(`ChangeEmail: ${response.statusCode} ${response.body}`)
    for (let i = 0; i < 200; i++) {
      const sent = messages.filter((m) => m.type === 'email_change' && m.to === newEmail)
      if (sent.length > before) return sent.at(-1)!.token!
      await sleep(10)
    }
    throw new Error('no email_change message')
  }
  return { ...built, messages, events, post, message, changeToken }
}
