import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Teardown } from './teardown.js'

/**
 * How the range service behaves: answers (`ok`), answers after `delayMs` (`slow`), never answers (`hang`),
 * sends headers and then nothing more (`stall`), answers HTML (`garbage`), 503 (`status`), an empty 200
 * (`empty`), more than a megabyte (`huge`), or just under a megabyte of distinct breached suffixes (`large`).
 */
export type RangeMode = 'ok' | 'slow' | 'hang' | 'stall' | 'garbage' | 'status' | 'empty' | 'huge' | 'large'

/** Lines of a `large` answer: 26,000 of 39 bytes, 1,014,000 bytes, just under the client's 1 MiB. */
const LARGE_LINES = 26_000

export interface RangeServer {
  /** The address to give as rangeUrl: the prefix is appended to it. */
  url: string
  /** Every request it got: the path after /range/ and the headers. */
  requests: Array<{ path: string, headers: IncomingHttpHeaders }>
  mode: RangeMode
  delayMs: number
  /** Makes `password` breached (count > 0) in the answers. */
  breach: (password: string, count?: number) => void
  /** Puts `password`'s suffix in the answers with a count of 0, as padding does. */
  pad: (password: string) => void
}

const sha1 = (password: string): string => createHash('sha1').update(password.normalize('NFC'), 'utf8').digest('hex').toUpperCase()

/** A k-anonymity range service of the test's own on 127.0.0.1, closed in teardown. */
export async function startRangeServer (t: Teardown): Promise<RangeServer> {
  const counts = new Map<string, number>()
  const hanging = new Set<ServerResponse>()
  const state = {
    mode: 'ok' as RangeMode,
    delayMs: 0,
    requests: [] as RangeServer['requests']
  }

  const answer = (prefix: string, padding: boolean): string => {
    const lines = [...counts].filter(([hash]) => hash.startsWith(prefix)).map(([hash, count]) => `${hash.slice(5)}:${count}`)
    // Real padding: random suffixes with a count of 0 among the real lines (and one real suffix per prefix
    // at least, as every prefix of the real set has some).
    if (padding) for (let i = 0; i < 20; i++) lines.push(`${randomBytes(18).toString('hex').slice(0, 35).toUpperCase()}:0`)
    lines.push(`${'0'.repeat(34)}1:3`)
    return lines.join('\r\n')
  }

  const server = createServer((request, response) => {
    const path = (request.url ?? '').replace(/^\/range\//, '')
    state.requests.push({ path, headers: request.headers })
    const padding = request.headers['add-padding'] === 'true'
    switch (state.mode) {
      case 'hang':
        hanging.add(response)
        return
      case 'stall':
        response.writeHead(200, { 'content-type': 'text/plain' })
        response.write('0000000000000000000000000000000000A:1\r\n')
        hanging.add(response)
        return
      case 'garbage':
        response.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Service temporarily unavailable</body></html>')
        return
      case 'status':
        response.writeHead(503).end('busy')
        return
      case 'empty':
        response.writeHead(200, { 'content-type': 'text/plain' }).end('')
        return
      case 'huge':
        response.writeHead(200, { 'content-type': 'text/plain' }).end(`${'0'.repeat(35)}:1\r\n`.repeat(40_000))
        return
      case 'large': {
        const hex = randomBytes(18 * LARGE_LINES).toString('hex').toUpperCase()
        const lines = Array.from({ length: LARGE_LINES }, (_, i) => `${hex.slice(i * 36, i * 36 + 35)}:1`)
        response.writeHead(200, { 'content-type': 'text/plain' }).end(lines.join('\r\n'))
        return
      }
    }
    const send = (): void => { response.writeHead(200, { 'content-type': 'text/plain' }).end(answer(path, padding)) }
    if (state.mode === 'slow') setTimeout(send, state.delayMs)
    else send()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    for (const response of hanging) response.destroy()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}/range/`,
    get requests () { return state.requests },
    get mode () { return state.mode },
    set mode (mode) { state.mode = mode },
    get delayMs () { return state.delayMs },
    set delayMs (ms) { state.delayMs = ms },
    breach: (password, count = 42) => { counts.set(sha1(password), count) },
    pad: (password) => { counts.set(sha1(password), 0) }
  }
}

/** An address on 127.0.0.1 where nothing listens: a service that is down. */
export async function downRangeUrl (): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return `http://127.0.0.1:${port}/range/`
}
