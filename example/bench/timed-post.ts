import { request, type Agent } from 'node:http'

/** One JSON POST, timed from the request to the end of the answer: the latency benches' probe. */
export async function timedPost (agent: Agent, url: URL, body: string): Promise<{ status: number, ms: number }> {
  return await new Promise((resolve, reject) => {
    const started = performance.now()
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume()
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }) })
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}
