import type { FastifyInstance } from 'fastify'
import QRCode from 'qrcode'
import { authenticate } from '../lib/index.js'

/**
 * POST qr: the browser app's two-factor set-up as an image. The page sends the otpauth URI Setup just gave
 * it and gets a PNG data URL back (rendered by the qrcode package), so the secret is scanned, not shown.
 * Guarded, never cached, and only for otpauth TOTP URIs.
 */
export function registerQrRoute (app: FastifyInstance): void {
  app.post<{ Body: { text: string } }>('/qr', {
    onRequest: authenticate,
    schema: {
      hide: true,
      body: {
        type: 'object',
        required: ['text'],
        properties: { text: { type: 'string', maxLength: 1024, pattern: '^otpauth://totp/' } }
      }
    }
  }, async (request, reply) => {
    const dataUrl = await QRCode.toDataURL(request.body.text, { errorCorrectionLevel: 'M', margin: 2, width: 220 })
    return await reply.header('cache-control', 'no-store').send({ dataUrl })
  })
}
