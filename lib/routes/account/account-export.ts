import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { ExportRoutes } from '../../account/options.js'
import { accountOf, authenticate, requireRecentAuthentication, sessionOf } from '../../guard/authenticate.js'
import { jsonResponse, recentAuthenticationResponses } from '../../http/openapi.js'
import type { RouteContext } from '../context.js'
import { Session, sessionView } from '../sessions/sessions.js'

export const ExportReply = Type.Object({
  account: Type.Object({ id: Type.String(), email: Type.String() }, { additionalProperties: true, description: 'The account without its password hash, with your own fields.' }),
  sessions: Type.Array(Session),
  passkeys: Type.Array(Type.Unknown(), { description: 'The account\'s passkeys, as GET /Passkeys lists them.' }),
  mfa: Type.Object({ enabled: Type.Boolean(), recoveryCodesLeft: Type.Integer() }),
  host: Type.Optional(Type.Unknown({ description: 'What your exportData(account) returned.' }))
})

/** GET /Account/Export (guarded, recent authentication): what the plugin holds of the caller, and what the host adds. */
export function registerAccountExport (app: FastifyInstance, { sessionService, secondFactor, passkeys, emit, reauthMaxAge }: RouteContext, { exportData }: ExportRoutes): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get('/Account/Export', {
    onRequest: [authenticate, requireRecentAuthentication(reauthMaxAge)],
    schema: {
      summary: 'Everything held of your account',
      description: `Needs a password proof within the last ${reauthMaxAge} s (Reauthenticate). Never the password hash.`,
      tags: ['Account'],
      security: [{ bearerAuth: [] }],
      response: { 200: jsonResponse('The account, its sessions, passkeys and second factor, and your app\'s data under host.', ExportReply), ...recentAuthenticationResponses() }
    }
  }, async (request) => {
    const account = accountOf(request)!
    const current = sessionOf(request)!.id
    const sessions = (await sessionService.list(request, account.id)).map((session) => sessionView(session, current))
    const mfa = secondFactor === undefined ? { enabled: false, recoveryCodesLeft: 0 } : await secondFactor.status(request, account.id)
    const host = exportData === undefined ? {} : { host: await exportData(account) }
    emit(request, { type: 'account.exported', accountId: account.id })
    // Never a hash, even from a store that hands one out where it should not.
    const { passwordHash: _, ...view } = account as typeof account & { passwordHash?: string }
    return { account: view, sessions, passkeys: await passkeys?.list(request, account.id) ?? [], mfa, ...host }
  })
}
