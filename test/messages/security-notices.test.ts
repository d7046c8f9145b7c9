import t from 'tap'
import type { AuthEvent, PasswordAuthMessage } from '../../lib/index.js'
import { describeDevice, deviceLabel } from '../../lib/http/user-agent.js'
import { buildTestApp, EMAIL, PASSWORD } from '../helpers/app.js'
import { mfaApp } from '../helpers/mfa.js'

// Contract §21: new_device_login, and the sessions list's device and address.

const CHROME_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36'
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1'
const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

async function noticesApp (t: Parameters<typeof buildTestApp>[0], auth = {}, fastify = {}) {
  const messages: PasswordAuthMessage[] = []
  const events: AuthEvent[] = []
  const built = await buildTestApp(t, {
    auth: { sessionRoutes: true, deliver: (message) => { messages.push(message) }, onEvent: (event) => { events.push(event) }, ...auth },
    fastify
  })
  const login = async (headers: Record<string, string> = {}, deviceToken?: string) => await built.app.inject({
    method: 'POST', url: '/Auth/Login', headers: { 'user-agent': CHROME_MAC, ...headers }, payload: { email: EMAIL, password: PASSWORD, ...deviceToken === undefined ? {} : { deviceToken } }, remoteAddress: '198.51.100.7'
  })
  const notices = async () => { await sleep(20); return messages.filter((message) => message.type === 'new_device_login') }
  return { ...built, messages, events, login, notices }
}

t.test('describeDevice and deviceLabel: bowser\'s names, "Unknown" where the User-Agent names none', async (t) => {
  t.same(describeDevice(CHROME_MAC), { browser: 'Chrome', os: 'macOS', type: 'desktop' })
  t.same(describeDevice(SAFARI_IPHONE), { browser: 'Safari', os: 'iOS', type: 'mobile' })
  t.same(describeDevice('curl/8.4.0'), { browser: 'Unknown', os: 'Unknown', type: 'unknown' })
  t.same(describeDevice(''), { browser: 'Unknown', os: 'Unknown', type: 'unknown' }, 'empty: bowser would throw')
  t.same(describeDevice(undefined), { browser: 'Unknown', os: 'Unknown', type: 'unknown' })
  t.equal(deviceLabel(describeDevice(CHROME_MAC)), 'Chrome on macOS')
  t.equal(deviceLabel(describeDevice('curl/8.4.0')), 'Unknown browser')
  t.equal(deviceLabel({ browser: 'Firefox', os: 'Unknown', type: 'desktop' }), 'Firefox')
  for (let i = 0; i < 600; i++) describeDevice(`Agent/${i}`)
  t.same(describeDevice(CHROME_MAC), { browser: 'Chrome', os: 'macOS', type: 'desktop' }, 'still right once the cache turned over')
})

// Issue 37, item 3: for a User-Agent it does not recognise, bowser names the browser with the client's own text.
const PHISHING = 'Routine security check, call +1 555 0100 or see https://phish.example/1.0 (Windows NT 10.0; Win64; x64)'

t.test('only names bowser recognises: a User-Agent\'s own text never becomes a name; every label at most 40 characters', async (t) => {
  const Bowser = (await import('bowser')).default
  t.match(Bowser.parse(PHISHING).browser.name, /phish/, 'bowser alone would name the browser with the text')
  t.same(describeDevice(PHISHING), { browser: 'Unknown', os: 'Windows', type: 'desktop' })
  t.equal(deviceLabel(describeDevice(PHISHING)), 'Unknown browser on Windows')
  t.same(describeDevice('Visit https://phish.example/now/1.0 ok'), { browser: 'Unknown', os: 'Unknown', type: 'unknown' })
  for (const browser of [...Object.values(Bowser.BROWSER_MAP), 'Unknown']) {
    for (const os of [...Object.values(Bowser.OS_MAP), 'Unknown']) {
      const label = deviceLabel({ browser, os, type: 'desktop' })
      if (label.length > 40) t.fail(`${label}: ${label.length} characters`)
    }
  }
  t.equal(deviceLabel({ browser: 'Samsung Internet for Android', os: 'Windows Phone', type: 'mobile' }), 'Samsung Internet for Android on Windows…')
})

t.test('the notice, the sessions list and the trusted devices name an unrecognised browser "Unknown", never with its text', async (t) => {
  const { login, notices, app } = await noticesApp(t)
  const { accessToken } = (await login({ 'user-agent': PHISHING })).json()
  t.match(await notices(), [{ device: 'Unknown browser on Windows' }])
  const [session] = (await app.inject({ url: '/Auth/Sessions', headers: { authorization: `Bearer ${accessToken}` } })).json()
  t.same(session.device, { browser: 'Unknown', os: 'Windows', type: 'desktop' })

  const { enable, app: mfa, challenge } = await mfaApp(t, { mfa: { issuer: 'Example App', trustDays: 30 } })
  const { recoveryCodes } = await enable()
  const trusted = await mfa.inject({ method: 'POST', url: '/Auth/LoginMfa', headers: { 'user-agent': PHISHING }, payload: { mfaToken: await challenge(), code: recoveryCodes[0], rememberDevice: true } })
  t.equal(trusted.statusCode, 200)
  const devices = (await mfa.inject({ url: '/Auth/Sessions/Devices', headers: { authorization: `Bearer ${trusted.json().accessToken}` } })).json()
  t.match(devices, [{ label: 'Unknown browser on Windows' }])
  t.notOk(JSON.stringify(devices).includes('phish'))
})

t.test('a Login without a live device token of the account tells its owner: time, address, device', async (t) => {
  const { login, notices, events, accounts, ada, app } = await noticesApp(t)
  const first = await login()
  t.equal(first.statusCode, 200)
  const [notice, ...more] = await notices()
  t.equal(more.length, 0)
  t.match(notice, { type: 'new_device_login', to: EMAIL, accountId: ada.id, ip: '198.51.100.7', device: 'Chrome on macOS' })
  t.ok(Math.abs(notice!.at! - Date.now()) < 5000, 'at: when')
  t.notOk('token' in notice!, 'no token')
  t.match(events.find((event) => event.type === 'login.succeeded'), { newDevice: true })

  const { deviceToken } = first.json()
  t.equal((await login({}, deviceToken)).statusCode, 200)
  t.equal((await notices()).length, 1, 'the device it was given is known: nothing')
  t.notOk('newDevice' in events.filter((event) => event.type === 'login.succeeded').at(-1)!)
  await login({}, 'aaaaaaaaaaaaaaaaaaaaaa.zzzzzz.' + 'A'.repeat(43))
  t.equal((await notices()).length, 2, 'a forged device token is no device token')
  accounts.add({ email: 'bob@example.com', passwordHash: ada.passwordHash })
  const bob = await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: 'bob@example.com', password: PASSWORD, deviceToken } })
  t.equal(bob.statusCode, 200)
  t.match((await notices()).at(-1), { to: 'bob@example.com' }, 'nor is ada\'s device token one of bob\'s')
  t.equal((await login({}, deviceToken)).statusCode, 200)
  t.equal((await notices()).length, 3)
})

t.test('new_device_login counts within mailLimit per address and sliding hour', async (t) => {
  const { login, notices } = await noticesApp(t, { mailLimit: 2 })
  for (let i = 0; i < 4; i++) t.equal((await login()).statusCode, 200)
  t.equal((await notices()).length, 2)
})

t.test('in cookie mode the device cookie is the device token', async (t) => {
  const { login, notices } = await noticesApp(t, { refresh: { cookie: true } })
  const first = await login()
  const cookie = String(first.headers['set-cookie']).match(/__Secure-fastify-password-auth-device=([^;]+)/)![1]!
  t.equal((await login({ cookie: `__Secure-fastify-password-auth-device=${cookie}` })).statusCode, 200)
  t.equal((await notices()).length, 1)
})

t.test('LoginMfa: a new device is told of after the second factor, not at the password', async (t) => {
  const { enable, login, loginMfa, messages, app } = await mfaApp(t)
  const { recoveryCodes } = await enable()
  await sleep(20)
  const before = messages.filter((message) => message.type === 'new_device_login').length
  const challenged = await login()
  await sleep(20)
  t.equal(messages.filter((message) => message.type === 'new_device_login').length, before, 'a challenge is no sign-in')
  const answer = await loginMfa(challenged.json().mfaToken, recoveryCodes[0])
  t.equal(answer.statusCode, 200)
  await sleep(20)
  t.equal(messages.filter((message) => message.type === 'new_device_login').length, before + 1)
  const { deviceToken } = answer.json()
  const again = await app.inject({ method: 'POST', url: '/Auth/Login', payload: { email: EMAIL, password: PASSWORD, deviceToken } })
  const known = await app.inject({ method: 'POST', url: '/Auth/LoginMfa', payload: { mfaToken: again.json().mfaToken, code: recoveryCodes[1], deviceToken } })
  t.equal(known.statusCode, 200)
  await sleep(20)
  t.equal(messages.filter((message) => message.type === 'new_device_login').length, before + 1, 'with the device token: nothing')
})

t.test('without deliver nothing is counted or sent', async (t) => {
  let reserves = 0
  const { MemoryAttemptStore } = await import('../../lib/index.js')
  const attempts = new MemoryAttemptStore()
  const counting = { reserve: async (...args: Parameters<typeof attempts.reserve>) => { reserves++; return await attempts.reserve(...args) }, settle: attempts.settle.bind(attempts) }
  const { login } = await noticesApp(t, { deliver: undefined, attempts: counting })
  t.equal((await login()).statusCode, 200)
  await sleep(20)
  t.equal(reserves, 1, 'the e-mail\'s password attempt only: no message budget')
})

t.test('the sessions list names each device and its address as trustProxy gives it, never a forged header', async (t) => {
  const forged = { 'x-forwarded-for': '203.0.113.66', 'user-agent': SAFARI_IPHONE }
  const direct = await noticesApp(t)
  const { accessToken } = (await direct.login()).json()
  await direct.login(forged)
  const listed = (await direct.app.inject({ url: '/Auth/Sessions', headers: { authorization: `Bearer ${accessToken}` } })).json()
  t.match(listed, [
    { ip: '198.51.100.7', userAgent: CHROME_MAC, device: { browser: 'Chrome', os: 'macOS', type: 'desktop' }, trustedDevice: false },
    { ip: '198.51.100.7', device: { browser: 'Safari', os: 'iOS', type: 'mobile' }, trustedDevice: false }
  ])
  t.notOk(JSON.stringify(listed).includes('203.0.113.66'), 'a host without trustProxy ignores X-Forwarded-For')
  t.notOk((await direct.notices()).some((notice) => notice.ip === '203.0.113.66'), 'and so does the notice')

  const proxied = await noticesApp(t, {}, { trustProxy: '198.51.100.7' })
  const token = (await proxied.login(forged)).json().accessToken
  const [session] = (await proxied.app.inject({ url: '/Auth/Sessions', headers: { authorization: `Bearer ${token}` } })).json()
  t.equal(session.ip, '203.0.113.66', 'behind the proxy the host trusts, the address it forwarded')
  t.match(await proxied.notices(), [{ ip: '203.0.113.66', device: 'Safari on iOS' }])
})

t.test('the example server\'s mail for new_device_login names the time, the address and the device', async (t) => {
  const { renderMessage } = await import('../../example/mailer.js')
  const at = Date.UTC(2026, 10, 26, 16, 30)
  const { subject, text } = renderMessage({ type: 'new_device_login', to: EMAIL, at, ip: '198.51.100.7', device: 'Chrome on macOS' }, 'https://app.example.com')
  t.equal(subject, 'A sign-in from a new device')
  t.match(text, /Thu, 26 Nov 2026 16:30:00 GMT from 198\.51\.100\.7, with Chrome on macOS/)
  t.match(text, /reset your password at https:\/\/app\.example\.com\//)
})
