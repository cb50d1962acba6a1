// The benchmark's OTLP/gRPC collector: it accepts every TraceService/Export and answers the empty
// (all-default) ExportTraceServiceResponse, without decoding, so it takes little CPU from the
// load generator. It counts exports and bytes, to show the spans really left the server.
import { Server, ServerCredentials, type ServiceDefinition, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js'

const identity = (buffer: Buffer): Buffer => buffer
const EXPORT: ServiceDefinition = {
  Export: {
    path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
}
const EMPTY = Buffer.alloc(0)

export type Collector = Readonly<{ port: number; exports(): number; bytes(): number; close(): void }>

export const startCollector = async (): Promise<Collector> => {
  let exports = 0
  let bytes = 0
  const server = new Server()
  server.addService(EXPORT, {
    Export: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
      exports++
      bytes += call.request.length
      callback(null, EMPTY)
    },
  })
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, p) => (error === null ? resolve(p) : reject(error))),
  )
  return { port, exports: () => exports, bytes: () => bytes, close: () => server.forceShutdown() }
}
