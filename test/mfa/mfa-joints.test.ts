import t, { type Test } from 'tap'
import type { AttemptStore, MfaStore } from '../../lib/index.js'
import { changeBody, EMAIL, NEW_PASSWORD, PASSWORD } from '../helpers/app.js'
import { currentStep, mfaApp, totpCode } from '../helpers/mfa.js'
import { expectProblem } from '../helpers/problem.js'

// Issue 29, item 3: the joints between the second factor and the rest of an account's life (contract §4, §15).

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))
const DAY_MS = 86_400_000

/** Date.now() moved by hand for the rest of the test (the memory stores, the tokens and otplib read it). */
function timeTravel (t: Test): { advance: (ms: number) => void } {
  const realNow = Date.now
  let offset = 0
  Date.now = () => realNow() + offset
  t.teardown(() => { Date.now = realNow })
  return { advance: (ms) => { offset += ms } }
}

/** A 6-digit code that is none of the codes `secret` accepts now. */
function wrongCode (secret: string): string {
  const valid = new Set([-1, 0, 1].map((delta) => totpCode(secret, currentStep() + delta)))
  return ['000000', '111111', '222222', '333333'].find((code) => !valid.has(code))!
}

/** An app with two factors on for ada and the reset routes; `reset(code)` asks for a link and sets NEW_PASSWORD with it. */
async function jointsApp (t: Test) {
  const built = await mfaApp(t, { passwordReset: true })
  const enabled = await built.enable()
  const { post, messages } = built
  const resetToken = async (): Promise<string> => {
    const before = messages.length
    await post('/ForgotPassword', undefined, { email: EMAIL })
    for (let i = 0; i < 100 && !messages.slice(before).some((message) => message.type === 'password_reset'); i++) await sleep(5)
    return messages.slice(before).find((message) => message.type === 'password_reset')!.token!
  }
  const reset = async (token: string, code: string) => await post('/ResetPassword', undefined, { token, newPassword: NEW_PASSWORD, confirmNewPassword: NEW_PASSWORD, code })
  /** A wrong code at LoginMfa after the right password, as a thief sends it: 401 while free, 429 while blocked. */
  const thiefGuess = async () => await built.loginMfa(await built.challenge(), wrongCode(enabled.secret))
  return { ...built, ...enabled, resetToken, reset, thiefGuess }
}

t.test('ChangePassword needs a code with two factors on: after the password; without a valid one nothing changes', async (t) => {
  const { changePassword, me, accessToken, recoveryCodes, login, events, secret } = await jointsApp(t)
  const missing = await changePassword(changeBody())
  expectProblem(t, missing, 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'the password alone')
  t.match(events.filter((event) => event.type === 'mfa.code_required'), [{ route: 'ChangePassword' }], 'a missing code is no failed second factor')
  expectProblem(t, await changePassword(changeBody({ code: wrongCode(secret) })), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'a wrong code')
  expectProblem(t, await changePassword(changeBody({ currentPassword: 'not the password at all', code: recoveryCodes[0] })), 401, 'FST_PWAUTH_INVALID_CREDENTIALS',
    'a wrong password: the code is not even looked at')
  t.equal((await me(accessToken)).statusCode, 200, 'no session ended')
  t.equal((await login(EMAIL, PASSWORD)).json().mfaRequired, true, 'the password is unchanged')
  t.equal((await changePassword(changeBody({ code: recoveryCodes[0] }))).statusCode, 204, 'the password and a recovery code')
  expectProblem(t, await me(accessToken), 401, 'FST_PWAUTH_TOKEN_INVALID', 'then every session ends')
  t.equal((await login(EMAIL, NEW_PASSWORD)).json().mfaRequired, true)
})

t.test('a password thief sending one wrong code per block holds neither the owner\'s known device nor her reset out', async (t) => {
  const { loginMfa, challenge, thiefGuess, secret, step, resetToken, reset, post, changePassword } = await jointsApp(t)
  // The owner's phone signed in once: it is a known device of the account.
  const { deviceToken } = (await loginMfa(await challenge(), totpCode(secret, step + 1))).json()
  t.type(deviceToken, 'string')
  const clock = timeTravel(t)
  expectProblem(t, await changePassword(changeBody()), 401, 'FST_PWAUTH_MFA_CODE_INVALID', 'the thief cannot set his own password and end her sessions')
  let blocks = 0
  // Bounded: a counter that never blocks reads as a failure, not a hang.
  for (let guesses = 0; blocks < 8 && guesses < 200; guesses++) {
    const answer = await thiefGuess()
    if (answer.statusCode !== 429) continue
    blocks++
    // The thief waits out each block, then sends one more wrong code: the counter never opens.
    clock.advance(Number(answer.headers['retry-after']) * 1000)
  }
  t.equal(blocks, 8, 'the thief\'s wrong codes met eight blocks')
  t.equal((await thiefGuess()).statusCode, 401, 'his wrong code after the block')
  expectProblem(t, await loginMfa(await challenge(), totpCode(secret)), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'the account\'s code counter is held shut')

  const mfaToken = (await post('/Login', undefined, { email: EMAIL, password: PASSWORD, deviceToken })).json().mfaToken
  const onDevice = await post('/LoginMfa', undefined, { mfaToken, code: totpCode(secret), deviceToken })
  t.equal(onDevice.statusCode, 200, 'her known device gets through LoginMfa: judged on its own code counter')
  t.match(onDevice.json(), { accessToken: String })

  clock.advance(30_000) // her next code
  t.equal((await reset(await resetToken(), totpCode(secret))).statusCode, 204, 'her ResetPassword with a valid code succeeds: its codes count on the link alone')
  t.equal((await loginMfa(await challenge(EMAIL, NEW_PASSWORD), totpCode(secret, currentStep() + 1))).statusCode, 200, 'and the reset cleared the account\'s counter')
})

t.test('a known device has its own code counter: its failures leave the account\'s untouched', async (t) => {
  const { loginMfa, challenge, post, secret, step, recoveryCodes } = await jointsApp(t)
  const { deviceToken } = (await loginMfa(await challenge(), totpCode(secret, step + 1))).json()
  const onDevice = async (code: string) => await post('/LoginMfa', undefined, { mfaToken: await challenge(), code, deviceToken })
  for (let i = 0; i < 10; i++) t.equal((await onDevice(wrongCode(secret))).statusCode, 401, `wrong code ${i + 1} on the device`)
  expectProblem(t, await onDevice(recoveryCodes[0]!), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'the device\'s counter is blocked')
  t.equal((await loginMfa(await challenge(), recoveryCodes[0])).statusCode, 200, 'the account\'s counter never moved')
})

t.test('codes sent with a reset link count on the link alone (5 wrong kill it), never on the account\'s counter', async (t) => {
  const { thiefGuess, resetToken, reset, secret, loginMfa, challenge, recoveryCodes } = await jointsApp(t)
  for (let i = 0; i < 9; i++) t.equal((await thiefGuess()).statusCode, 401)
  const link = await resetToken()
  for (let i = 0; i < 5; i++) expectProblem(t, await reset(link, wrongCode(secret)), 401, 'FST_PWAUTH_MFA_CODE_INVALID', `wrong code ${i + 1} with the link`)
  expectProblem(t, await reset(link, recoveryCodes[0]!), 400, 'FST_PWAUTH_RESET_TOKEN_INVALID', 'the link died at its 5th wrong code')
  t.equal((await thiefGuess()).statusCode, 401, 'the account\'s counter is at its 10th failure, not its 14th')
  expectProblem(t, await loginMfa(await challenge(), recoveryCodes[0]), 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS')
})

t.test('after 100 code failures in a row the account\'s counter accepts nothing until a password reset, which clears it', async (t) => {
  const { thiefGuess, loginMfa, challenge, recoveryCodes, resetToken, reset, secret } = await jointsApp(t)
  const clock = timeTravel(t)
  /** Wrong codes until `failures` of them were refused as wrong, waiting out every block. */
  const fail = async (failures: number) => {
    for (let counted = 0; counted < failures;) {
      const answer = await thiefGuess()
      if (answer.statusCode === 401) counted++
      else clock.advance(Number(answer.headers['retry-after']) * 1000)
    }
  }
  await fail(99)
  clock.advance(15 * 60_000)
  t.equal((await loginMfa(await challenge(), recoveryCodes[0])).statusCode, 200, 'a success after 99: the row starts again')
  await fail(100)
  clock.advance(2 * DAY_MS)
  const locked = await loginMfa(await challenge(), recoveryCodes[1])
  expectProblem(t, locked, 429, 'FST_PWAUTH_TOO_MANY_ATTEMPTS', 'two days later, the right code after 100 wrong ones in a row')
  t.ok(Number(locked.headers['retry-after']) > 300 * 86_400, `locked, not blocked: Retry-After ${locked.headers['retry-after']} s`)
  t.equal((await reset(await resetToken(), totpCode(secret))).statusCode, 204, 'the owner resets her password with a code')
  t.equal((await loginMfa(await challenge(EMAIL, NEW_PASSWORD), recoveryCodes[1])).statusCode, 200, 'the reset lifted the lock')
})

t.test('mfa_code_failed: the first wrong code after a correct password each day tells the owner', async (t) => {
  const { thiefGuess, messages, post, accessToken, secret, resetToken, reset, changePassword } = await jointsApp(t)
  const notices = () => messages.filter((message) => message.type === 'mfa_code_failed')
  const clock = timeTravel(t)
  t.equal((await thiefGuess()).statusCode, 401)
  await sleep(30)
  t.match(notices(), [{ type: 'mfa_code_failed', to: EMAIL }], 'a wrong code at LoginMfa, after the password')
  t.notOk('token' in notices()[0]!, 'no token in it')
  expectProblem(t, await post('/Reauthenticate', accessToken, { password: PASSWORD, code: wrongCode(secret) }), 401, 'FST_PWAUTH_MFA_CODE_INVALID')
  expectProblem(t, await changePassword(changeBody({ code: wrongCode(secret) })), 401, 'FST_PWAUTH_MFA_CODE_INVALID')
  await sleep(30)
  t.equal(notices().length, 1, 'once a day')
  clock.advance(DAY_MS + 1000)
  expectProblem(t, await reset(await resetToken(), wrongCode(secret)), 401, 'FST_PWAUTH_MFA_CODE_INVALID')
  await sleep(30)
  t.equal(notices().length, 1, 'a wrong code with a reset link proves no password: no notice')
  expectProblem(t, await changePassword(changeBody({ code: wrongCode(secret) })), 401, 'FST_PWAUTH_MFA_CODE_INVALID')
  await sleep(30)
  t.equal(notices().length, 2, 'the next day, again')
})

t.test('Reauthenticate without a code is not a failed second factor: mfa.code_required, nothing counted, no notice', async (t) => {
  const { post, accessToken, events, messages, thiefGuess } = await jointsApp(t)
  for (let i = 0; i < 3; i++) expectProblem(t, await post('/Reauthenticate', accessToken, { password: PASSWORD }), 401, 'FST_PWAUTH_MFA_CODE_INVALID')
  t.match(events.filter((event) => event.type === 'mfa.code_required'), Array(3).fill({ route: 'Reauthenticate' }))
  t.notOk(events.some((event) => event.type === 'mfa.failed'), 'no mfa.failed event')
  await sleep(30)
  t.notOk(messages.some((message) => message.type === 'mfa_code_failed'))
  for (let i = 0; i < 10; i++) t.equal((await thiefGuess()).statusCode, 401, `wrong code ${i + 1}: the missing ones were not counted`)
})

t.test('a store failure in a code check answers 503 and counts nothing: not on the counter, its lock or the challenge', async (t) => {
  const { MemoryAttemptStore, MemoryMfaStore } = await import('../../lib/index.js')
  const attempts = new MemoryAttemptStore()
  const mfaStore = new MemoryMfaStore()
  let failLock = false
  let failStep = false
  // A proxy of the memory store: to the plugin it is that store, in this process (nothing shared).
  const flakyAttempts: AttemptStore = new Proxy(attempts, {
    get (target, property) {
      const value = Reflect.get(target, property, target)
      if (property !== 'reserve') return typeof value === 'function' ? value.bind(target) : value
      return async (...args: Parameters<AttemptStore['reserve']>) => {
        if (failLock && args[0].startsWith('mfa-lock.')) throw new Error('attempt store down')
        return await target.reserve(...args)
      }
    }
  })
  const flakyMfa: MfaStore = {
    get: async (...args) => await mfaStore.get(...args),
    begin: async (...args) => await mfaStore.begin(...args),
    enable: async (...args) => await mfaStore.enable(...args),
    acceptStep: async (...args) => {
      if (failStep) throw new Error('mfa store down')
      return await mfaStore.acceptStep(...args)
    },
    useRecoveryCode: async (...args) => await mfaStore.useRecoveryCode(...args),
    replaceRecoveryCodes: async (...args) => await mfaStore.replaceRecoveryCodes(...args),
    disable: async (...args) => await mfaStore.disable(...args),
    secrets: () => mfaStore.secrets(),
    reseal: async (...args) => await mfaStore.reseal(...args)
  }
  const { enable, challenge, loginMfa } = await mfaApp(t, { attempts: flakyAttempts, mfa: { store: flakyMfa }, storeTimeout: 500 })
  const { secret, step } = await enable()
  const mfaToken = await challenge()
  failLock = true
  expectProblem(t, await loginMfa(mfaToken, totpCode(secret, step + 1)), 503, 'FST_PWAUTH_UNAVAILABLE', 'the lock cannot be read')
  failLock = false
  failStep = true
  expectProblem(t, await loginMfa(mfaToken, totpCode(secret, step + 1)), 503, 'FST_PWAUTH_UNAVAILABLE', 'the step cannot be recorded')
  failStep = false
  for (let i = 0; i < 4; i++) t.equal((await loginMfa(mfaToken, wrongCode(secret))).statusCode, 401, `wrong code ${i + 1}: the failures above did not count on the challenge`)
  t.equal((await loginMfa(mfaToken, totpCode(secret, step + 1))).statusCode, 200, 'the challenge had one code left')
})
