// Why a request finds no model: the codes the endpoints map to 404 and 503, and the messages they
// answer as the problem's detail.
import t from 'tap'
import { CodedError } from '../../lib/core/errors.js'
import { ModelLookupError, notFound, notReady } from '../../lib/serving/lookup-error.js'

t.test('an unknown model, or an unknown version of a known one, is MODEL_NOT_FOUND', async (t) => {
  const model = notFound('iris', undefined)
  t.ok(model instanceof ModelLookupError && model instanceof CodedError)
  t.match(model, { name: 'ModelLookupError', code: 'MODEL_NOT_FOUND', message: 'Model iris not found' })
  t.match(notFound('iris', '3'), { code: 'MODEL_NOT_FOUND', message: 'Model iris with version 3 not found' })
})

t.test('an UNAVAILABLE model is MODEL_NOT_READY, its reason in the message', async (t) => {
  const error = notReady('cars', 'default version 1: cars/1/model.json: not found')
  t.ok(error instanceof ModelLookupError)
  t.match(error, { name: 'ModelLookupError', code: 'MODEL_NOT_READY', message: 'Model cars is not ready: default version 1: cars/1/model.json: not found' })
})
