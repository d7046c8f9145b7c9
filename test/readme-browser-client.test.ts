import t from 'tap'
import { between, repoFile } from './helpers/docs.js'

// The README's browser client (Browser apps), run as written against a fake fetch: it refreshes and retries
// only when the access token expired or is missing, never after a wrong password or code (issue 29, item 8).

const block = between(repoFile('README.md'), '```js\nlet accessToken = null', '```')

/** Runs the README's block with `fetch` answering `answers` in turn; resolves its api() and the requests sent. */
async function client (answers: Array<{ status: number, code?: string, accessToken?: string }>) {
  const sent: string[] = []
  const fetch = async (url: string) => {
    sent.push(url)
    const answer = answers.shift() ?? { status: 500 }
    const body = JSON.stringify(answer.code === undefined ? { accessToken: answer.accessToken } : { code: answer.code })
    return new Response(body, { status: answer.status, headers: { 'content-type': 'application/json' } })
  }
  // eslint-disable-next-line no-new-func
  const run = new Function('fetch', `return (async () => { let accessToken = null\n${block}\nreturn { api, signedIn } })()`)
  const { api } = await run(fetch) as { api: (url: string, init?: object) => Promise<Response> }
  sent.length = 0
  return { api, sent }
}

t.test('an expired access token: one Refresh, then the request again', async (t) => {
  const { api, sent } = await client([
    { status: 200, accessToken: 'first' }, // the Refresh at page load
    { status: 401, code: 'FST_PWAUTH_TOKEN_INVALID' }, { status: 200, accessToken: 'second' }, { status: 200 }
  ])
  t.equal((await api('/api/me')).status, 200)
  t.same(sent, ['/api/me', '/api/Auth/Refresh', '/api/me'])
})

for (const code of ['FST_PWAUTH_MFA_CODE_INVALID', 'FST_PWAUTH_INVALID_CREDENTIALS', 'FST_PWAUTH_REAUTHENTICATION_REQUIRED']) {
  t.test(`${code}: answered as it came, sent once`, async (t) => {
    const { api, sent } = await client([{ status: 200, accessToken: 'first' }, { status: 401, code }])
    const response = await api('/api/Auth/Mfa/Disable', { method: 'POST' })
    t.equal(response.status, 401)
    t.same(sent, ['/api/Auth/Mfa/Disable'], 'no Refresh, no second try: a wrong code counts once')
  })
}
