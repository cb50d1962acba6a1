// `svc profile --model … --store s3://…`: the model read from a bucket with the environment's S3
// settings, as the service reads them; wrong settings are a usage error naming the variables.
import { join } from 'node:path'
import t from 'tap'
import { parseProfile } from '../../../lib/models/profile.js'
import { runProfileCommand } from '../../../lib/tools/profile/command.js'
import { artifactBytes } from '../../fixtures/models.js'
import { STAND_IN_CREDENTIALS, startStandIn } from '../../fixtures/s3/stand-in.js'

const run = async (args: readonly string[], env: Readonly<Record<string, string>>) => {
  let stdout = ''
  let stderr = ''
  const code = await runProfileCommand(args, { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), env })
  return { code, stdout, stderr }
}

t.test('--store s3://: the model from the bucket, the predictions in the profile', async (t) => {
  const standIn = await startStandIn(t, { buckets: ['models-bk'] })
  standIn.put('models-bk', 'prod/iris/manifest.json', Buffer.from('{"default_version":"1"}'))
  standIn.put('models-bk', 'prod/iris/1/model.json', artifactBytes('iris'))
  const dir = t.testdir({ 'iris.csv': 'sepal_length,sepal_width,petal_length,petal_width\n5.1,3.5,1.4,0.2\n6.5,2.8,4.6,1.5\n' })
  const args = ['--input', join(dir, 'iris.csv'), '--model', 'iris', '--bins', '2', '--store', 's3://models-bk/prod']
  const env = { SVC_S3_ENDPOINT: standIn.url, AWS_ACCESS_KEY_ID: STAND_IN_CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: STAND_IN_CREDENTIALS.secretAccessKey }
  const result = await run(args, env)
  t.equal(result.code, 0, result.stderr)
  t.match(parseProfile(result.stdout).predictions, { name: 'species', levels: ['setosa', 'versicolor', 'virginica'] })
  t.match(result.stderr, /predictions of iris version 1/)

  const unset = await run(args, {})
  t.equal(unset.code, 2)
  t.match(unset.stderr, /^svc profile: --store s3:\/\/models-bk\/prod\/: invalid configuration:\s+s3:\/\/models-bk\/prod\/: set AWS_REGION/)
  const wrong = await run(args, { ...env, AWS_SECRET_ACCESS_KEY: 'not-the-secret' })
  t.equal(wrong.code, 1)
  t.match(
    wrong.stderr,
    /iris\/manifest\.json: cannot be read from the model store \(HEAD s3:\/\/models-bk\/prod\/iris\/manifest\.json failed \(HTTP 403\): access denied, a wrong secret/,
  )
  t.notMatch(wrong.stderr, /not-the-secret/)
})

t.test('--store s3:// without an environment given: the settings are all unset, and the region is asked for', async (t) => {
  let stderr = ''
  const dir = t.testdir({ 'iris.csv': 'sepal_length,sepal_width,petal_length,petal_width\n5.1,3.5,1.4,0.2\n' })
  const code = await runProfileCommand(['--input', join(dir, 'iris.csv'), '--model', 'iris', '--store', 's3://models-bk/prod'], {
    stdout: () => {},
    stderr: (text) => void (stderr += text),
  })
  t.equal(code, 2)
  t.match(stderr, /set AWS_REGION/)
})
