import { connect } from 'node:net'

export interface RawResponse {
  /** e.g. 'HTTP/1.1 431 Request Header Fields Too Large'; '' if the server closed without answering. */
  statusLine: string
  status: number
  /** Lower-cased names. */
  headers: Record<string, string>
  body: string
}

export function parseRawResponse (text: string): RawResponse {
  const end = text.indexOf('\r\n\r\n')
  const [statusLine = '', ...lines] = (end === -1 ? text : text.slice(0, end)).split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { statusLine, status: Number(statusLine.split(' ')[1] ?? 0), headers, body: end === -1 ? '' : text.slice(end + 4) }
}

/**
 * Writes raw bytes to a listening server and resolves with what came back once the server closes the
 * connection (rejects after `timeoutMs`). The socket is never half-closed: Node aborts such a request.
 */
export async function rawRequest (port: number, data: string | Buffer, timeoutMs = 5000): Promise<RawResponse> {
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`no close within ${timeoutMs} ms`)) }, timeoutMs)
    socket.on('data', (chunk: Buffer) => { chunks.push(chunk) })
    // A reset after the answer (the server closes with unread input) still delivers the answer.
    socket.on('error', () => {})
    socket.on('close', () => { clearTimeout(timer); resolve(parseRawResponse(Buffer.concat(chunks).toString('latin1'))) })
    socket.write(data)
  })
}
