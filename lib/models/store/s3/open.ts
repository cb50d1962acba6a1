// The s3:// store SVC_MODEL_STORE names, built from the S3 settings (lib/config/s3.ts): its
// endpoint, its credentials and its client.
import type { S3Config } from '../../../config/config.js'
import type { Store } from '../store.js'
import { createS3Client } from './client.js'
import { createCredentialSource } from './credentials.js'
import { s3Endpoint } from './endpoint.js'
import { createS3Store } from './store.js'

export type S3StoreSpec = Readonly<{ bucket: string; prefix: string }>

export const openS3Store = (
  { bucket, prefix }: S3StoreSpec,
  s3: S3Config,
  { timeoutMs, maxBytes, onCredentialsStale }: Readonly<{ timeoutMs: number; maxBytes: number; onCredentialsStale?: ((error: Error) => void) | undefined }>,
): Store => {
  const client = createS3Client({
    endpoint: s3Endpoint(bucket, s3),
    credentials: createCredentialSource({
      ...s3.keys,
      imds: { disabled: s3.imds.isDisabled, endpoint: s3.imds.endpoint },
      onRefreshFailure: onCredentialsStale,
    }),
    timeoutMs,
  })
  return createS3Store({ bucket, prefix, client, maxBytes })
}
