import { connect, type Socket } from 'node:net'
import t from 'tap'
import { buildTestApp } from '../../helpers/app.js'
import { expectProblem } from '../../helpers/problem.js'
import { parseRawResponse } from '../../helpers/raw-http.js'
import { startServer } from '../../helpers/server-process.js'
import { within } from '../../helpers/within.js'

const REQUEST_TIMEOUT_S = 2
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

interface SlowClient {
  socket: Socket
  /** Resolves when the server closes the connection: after how long, and what it said. */
  closed: Promise<{ ms: number, answer: string }>
}

/** Sends headers announcing a 16000-byte body, then one body byte every `dripMs` (never the whole body). */
function slowBody (port: number, path: string, dripMs: number): SlowClient {
  const started = Date.now()
  const socket = connect(port, '127.0.0.1')
  let answer = ''
  socket.on('data', (chunk: Buffer) => { answer += chunk.toString('latin1') })
  socket.on('error', () => {})
  socket.write(`POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 16000\r\n\r\n{`)
  const drip = setInterval(() => { if (socket.writable) socket.write(' ') }, dripMs)
  const closed = new Promise<{ ms: number, answer: string }>((resolve) => {
    socket.on('close', () => { clearInterval(drip); resolve({ ms: Date.now() - started, answer }) })
  })
  return { socket, closed }
}

t.test('the plugin warns when the host server has no requestTimeout and listens beyond loopback', async (t) => {
  const warnings = async (fastify: object, host: string): Promise<string[]> => {
    const lines: string[] = []
    const { app } = await buildTestApp(t, { fastify: { ...fastify, logger: { level: 'warn', stream: { write: (line: string) => { lines.push(line) } } } } })
    await app.listen({ host, port: 0 })
    return lines.map((line) => JSON.parse(line).msg).filter((msg: string) => msg.includes('requestTimeout'))
  }
  t.same(await warnings({}, '127.0.0.1'), [], 'none on loopback, as in the quick start')
  const exposed = await warnings({}, '0.0.0.0')
  t.equal(exposed.length, 1, 'one warning on every interface')
  t.match(exposed[0], /requestTimeout is 0/)
  t.same(await warnings({ requestTimeout: 10_000 }, '0.0.0.0'), [], 'none once it is set')
})

t.test(`the example server cuts off a slow body after REQUEST_TIMEOUT (${REQUEST_TIMEOUT_S} s)`, async (t) => {
  const server = await startServer(t, { REQUEST_TIMEOUT: String(REQUEST_TIMEOUT_S) })
  const port = Number(new URL(server.url).port)
  // A byte every 500 ms keeps the connection busy, so only the request deadline can end it.
  const clients = ['/Auth/Login', '/Auth/Logout'].map((path) => slowBody(port, path, 500))
  t.teardown(() => { for (const { socket } of clients) socket.destroy() })
  for (const [i, { closed }] of clients.entries()) {
    const { ms, answer } = await within(10_000, closed, 'the server closing the slow connection')
    // Node checks deadlines once a second, so the cut comes between the timeout and a second later.
    t.ok(ms >= REQUEST_TIMEOUT_S * 1000 - 100 && ms < REQUEST_TIMEOUT_S * 1000 + 3000, `connection ${i + 1} closed after ${ms} ms`)
    expectProblem(t, parseRawResponse(answer), 408, 'FST_PWAUTH_REQUEST_TIMEOUT', `connection ${i + 1}`)
  }
})

t.test('300 slow bodies against a server with 256 file descriptors: /health answers again within seconds', async (t) => {
  const server = await startServer(t, { REQUEST_TIMEOUT: String(REQUEST_TIMEOUT_S) }, undefined, { fileLimit: 256 })
  const port = Number(new URL(server.url).port)
  const attackStarted = Date.now()
  const clients = Array.from({ length: 300 }, () => slowBody(port, '/Auth/Login', 1000))
  t.teardown(() => { for (const { socket } of clients) socket.destroy() })
  // A connection the server could not take is closed without a word (libuv's EMFILE fallback); one it took ends with
  // a 408 at the request timeout. How soon the refusal comes depends on how busy the machine is (over a second on CI).
  const refusedAfter: number[] = []
  for (const { closed } of clients) closed.then(({ answer, ms }) => { if (answer === '') refusedAfter.push(ms) }, () => {})

  let status = 0
  while (Date.now() - attackStarted < 10_000) {
    status = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(1000) }).then((response) => response.status, () => 0)
    if (status === 200) break
    await sleep(250)
  }
  const recoveredAfter = Date.now() - attackStarted
  const refused = refusedAfter.length
  t.ok(refused > 0, `the descriptors ran out: ${refused} connections were closed unanswered` +
    (refused > 0 ? `, after ${Math.min(...refusedAfter)}–${Math.max(...refusedAfter)} ms` : ''))
  t.equal(status, 200, `/health answers 200 again after ${recoveredAfter} ms`)
  t.ok(recoveredAfter < REQUEST_TIMEOUT_S * 1000 + 5000, 'within the request timeout and a few seconds')
  t.equal(server.process.exitCode, null, 'the server never crashed')
})
