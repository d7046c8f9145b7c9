import t, { type Test } from 'tap'
import type { AuthEvent, PasswordAuthOptions } from '../../lib/index.js'
import { createOutbox, type PasswordAuthMessage } from '../../lib/messages/outbox.js'
import { buildTestApp, changeBody, EMAIL } from '../helpers/app.js'

// Contract §13: message budgets per address, type and sliding hour; account_exists once an hour; security
// notices in a lane of their own in the delivery queue.

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))
const HOUR_MS = 3_600_000

/** An app with Register, ForgotPassword and ResetPassword on, whose messages and events the test reads. */
async function mailApp (t: Test, auth: Partial<PasswordAuthOptions> = {}) {
  const messages: PasswordAuthMessage[] = []
  const events: AuthEvent[] = []
  const built = await buildTestApp(t, {
    auth: { registration: true, passwordReset: true, deliver: (message) => { messages.push(message) }, onEvent: (event) => { events.push(event) }, ...auth }
  })
  const post = async (url: string, payload: Record<string, unknown>) => await built.app.inject({ method: 'POST', url: `/Auth${url}`, payload })
  const register = async (email: string, password = 'a stranger picks this passphrase') => await post('/Register', { email, password, confirmPassword: password })
  const forgot = async (email = EMAIL) => await post('/ForgotPassword', { email })
  return { ...built, messages, events, register, forgot }
}

/** Runs `work` with Date.now() reading `offset` ms ahead (the memory attempt store reads it). */
async function at<T> (offset: () => number, work: () => Promise<T>): Promise<T> {
  const realNow = Date.now
  Date.now = () => realNow() + offset()
  try {
    return await work()
  } finally {
    Date.now = realNow
  }
}

t.test('sign-ups of a taken address never starve its reset link: account_exists goes once an hour, password_reset has its own budget', async (t) => {
  const { register, forgot, messages, events } = await mailApp(t)
  for (let i = 0; i < 7; i++) t.equal((await register(EMAIL)).statusCode, 202, `Register ${i + 1} of the taken address`)
  await sleep(50)
  t.same(messages.map((message) => message.type), ['account_exists'], 'one account_exists, not seven')
  t.equal(events.filter((event) => event.type === 'account.registration_requested' && event.outcome === 'limited').length, 6)
  t.equal((await forgot()).statusCode, 202)
  await sleep(50)
  t.match(messages.at(-1), { type: 'password_reset', to: EMAIL, token: String }, 'the owner\'s ForgotPassword still delivers her link')
})

t.test('a stranger\'s sign-ups spend only verify_email\'s budget of an address', async (t) => {
  const { register, messages } = await mailApp(t, { mailLimit: 3 })
  for (let i = 0; i < 5; i++) await register('grace@example.com')
  await sleep(50)
  t.equal(messages.filter((message) => message.type === 'verify_email').length, 3, 'mailLimit per type')
})

t.test('the budget slides: no burst across a clock hour; the next message a whole hour after the budget is spent', async (t) => {
  const { forgot, messages } = await mailApp(t, { mailLimit: 5 })
  const realNow = Date.now()
  // 10 s before a clock hour begins.
  let offset = HOUR_MS - (realNow % HOUR_MS) - 10_000
  await at(() => offset, async () => {
    for (let i = 0; i < 5; i++) await forgot()
    offset += 20_000 // across the hour
    for (let i = 0; i < 5; i++) await forgot()
    await sleep(50)
    t.equal(messages.length, 5, '5 reset mails across the clock hour, not 10')
    offset += HOUR_MS - 30_000 // 59 min 50 s after the fifth
    await forgot()
    await sleep(50)
    t.equal(messages.length, 5, 'still nothing within the hour after the fifth')
    offset += 30_000
    await forgot()
    await sleep(50)
    t.equal(messages.length, 6, 'one more once the hour has passed')
    await forgot()
    await sleep(50)
    t.equal(messages.length, 6, 'and then one an hour, not a new burst')
  })
})

t.test('account_exists: once an hour per address, sliding', async (t) => {
  const { register, messages } = await mailApp(t)
  let offset = 0
  await at(() => offset, async () => {
    await register(EMAIL)
    offset += HOUR_MS - 1000
    await register(EMAIL)
    await sleep(50)
    t.equal(messages.length, 1, 'not again within the hour')
    offset += 2000
    await register(EMAIL)
    await sleep(50)
    t.equal(messages.length, 2, 'again an hour later')
  })
})

t.test('a security notice goes out while bulk messages hang in every delivery slot they may take', async (t) => {
  const delivered: string[] = []
  const { register, changePassword, messages } = await mailApp(t, {
    // Links hang at the mailer (a slow provider); notices go through.
    deliver: async (message) => {
      messages.push(message)
      if (message.type === 'verify_email') await new Promise(() => {})
      delivered.push(message.type)
    }
  })
  for (let i = 0; i < 6; i++) await register(`new${i}@example.com`)
  await sleep(50)
  t.equal(messages.filter((message) => message.type === 'verify_email').length, 3, 'three bulk deliveries hang; the rest wait')
  t.equal((await changePassword(changeBody())).statusCode, 204)
  for (let i = 0; i < 100 && !delivered.includes('password_changed'); i++) await sleep(5)
  t.same(delivered, ['password_changed'], 'the notice was delivered at once')
})

t.test('the delivery queue: a full bulk lane drops bulk messages only; notices have a lane of their own and go first', async (t) => {
  const events: AuthEvent[] = []
  const sent: string[] = []
  const release: Array<() => void> = []
  const log = { error: () => {} } as never
  const outbox = createOutbox(async (message) => {
    sent.push(message.to)
    if (message.type === 'password_reset') await new Promise<void>((resolve) => { release.push(resolve) })
  }, (_request, details) => { events.push(details as AuthEvent) }, log)
  for (let i = 0; i < 1003; i++) outbox.send(undefined, { type: 'password_reset', to: `bulk${i}@example.com`, token: 'x' })
  t.equal(release.length, 3, 'three bulk deliveries at once')
  outbox.send(undefined, { type: 'password_reset', to: 'one-too-many@example.com', token: 'x' })
  t.match(events, [{ type: 'message.failed', messageType: 'password_reset', reason: 'queue_full' }], 'the 1,001st waiting bulk message is dropped')
  outbox.send(undefined, { type: 'mfa_code_failed', to: 'notice@example.com' })
  outbox.send(undefined, { type: 'password_changed', to: 'notice2@example.com' })
  await sleep(10)
  t.same(sent.slice(3), ['notice@example.com', 'notice2@example.com'], 'notices go out through the free slot, ahead of 1,000 waiting links')
  t.equal(events.length, 1, 'no notice was dropped')
  release.shift()!()
  await sleep(10)
  t.equal(sent.at(-1), 'bulk3@example.com', 'a freed slot goes to the next bulk message')
  for (const done of release.splice(0)) done()
})
