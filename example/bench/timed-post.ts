import { request, type Agent } from 'node:http'

/**
 * One JSON POST, timed from the request to the end of the answer: the latency benches' probe. `bytes`: the
 * answer's header names and values and its body, as the client gets them (a Date value always has the same length).
 */
export async function timedPost (agent: Agent, url: URL, body: string, headers: Record<string, string> = {}): Promise<{ status: number, ms: number, bytes: number }> {
  return await new Promise((resolve, reject) => {
    const started = performance.now()
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      let bytes = res.rawHeaders.reduce((sum, field) => sum + Buffer.byteLength(field), 0)
      res.on('data', (chunk: Buffer) => { bytes += chunk.length })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, bytes }) })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}
