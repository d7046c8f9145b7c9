/** How long the session of `token` lives as created (`expiresAt` − `createdAt`), read from the server's GET /Auth/Sessions. */
export async function currentSessionLifetimeMs (url: string, token: string): Promise<number> {
  const listed = await (await fetch(`${url}/Auth/Sessions`, { headers: { authorization: `Bearer ${token}` } })).json() as Array<{ current: boolean, createdAt: string, expiresAt: string }>
  const current = listed.find((session) => session.current)!
  return Date.parse(current.expiresAt) - Date.parse(current.createdAt)
}
