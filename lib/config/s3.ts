// How an s3:// model store is reached (lib/README.md §10): the server, the region SigV4 signs for,
// and the credentials, as the AWS tools name them, so one environment serves svc and `aws s3`.
// Read by readConfig for the service, and by readS3Config for the commands that open a store
// (`svc push`, `svc profile`). Credentials come in this order: the variables, the systemd credentials
// svc-s3-* (lib/config/credentials.ts fills the variables from them), then an EC2 instance role
// through IMDSv2 (lib/models/store/s3/credentials.ts); profiles, ECS and web identity are not read.
import { ConfigError, type Env } from './config.js'
import type { StoreSpec } from './model-store.js'
import { Reader } from './reader.js'

export type S3Config = Readonly<{
  /** SVC_S3_ENDPOINT, else AWS_ENDPOINT_URL_S3: a non-AWS server, addressed path-style; undefined: AWS. */
  endpoint: URL | undefined
  /** AWS_REGION, else AWS_DEFAULT_REGION; with an endpoint and neither, us-east-1 (MinIO's and R2's `auto` take it). */
  region: string
  /** Static keys, both or neither; undefined: the instance role. */
  keys: Readonly<{ accessKeyId: string; secretAccessKey: string; sessionToken: string | undefined }> | undefined
  /** The instance metadata service: off with AWS_EC2_METADATA_DISABLED=true. */
  imds: Readonly<{ isDisabled: boolean; endpoint: URL }>
}>

/** The region signed for a non-AWS server that names none. */
export const DEFAULT_ENDPOINT_REGION = 'us-east-1'

/** The S3 settings; problems go to `r`. `store` decides whether a missing region is one. */
export const readS3 = (r: Reader, store: StoreSpec): S3Config => {
  const endpoint = r.read('SVC_S3_ENDPOINT') ?? r.read('AWS_ENDPOINT_URL_S3')
  const region = r.read('AWS_REGION') ?? r.read('AWS_DEFAULT_REGION')
  if (store.kind === 's3' && endpoint === undefined && region === undefined) {
    r.problem(
      `SVC_MODEL_STORE=s3://${store.bucket}/${store.prefix}: set AWS_REGION to the bucket's region (AWS), or SVC_S3_ENDPOINT to the server (MinIO, Ceph, R2)`,
    )
  }
  const accessKeyId = r.read('AWS_ACCESS_KEY_ID')
  const secretAccessKey = r.read('AWS_SECRET_ACCESS_KEY')
  const sessionToken = r.read('AWS_SESSION_TOKEN')
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    r.problem('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: set both or neither (or the credentials svc-s3-access-key-id and svc-s3-secret-access-key)')
  }
  if (sessionToken !== undefined && accessKeyId === undefined)
    r.refuse('AWS_SESSION_TOKEN', 'set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY too: a session token goes with its keys')
  const keys = accessKeyId === undefined || secretAccessKey === undefined ? undefined : { accessKeyId, secretAccessKey, sessionToken }
  return {
    endpoint,
    region: region ?? DEFAULT_ENDPOINT_REGION,
    keys,
    imds: { isDisabled: r.read('AWS_EC2_METADATA_DISABLED'), endpoint: r.read('AWS_EC2_METADATA_SERVICE_ENDPOINT') },
  }
}

/** The S3 settings of `env` alone, for a command; throws ConfigError naming every problem. */
export const readS3Config = (env: Env, store: StoreSpec): S3Config => {
  const r = new Reader(env, [])
  const s3 = readS3(r, store)
  if (r.problems.length > 0) throw new ConfigError(r.problems)
  return s3
}
