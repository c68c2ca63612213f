"""Signs S3 requests with botocore (as awscli and boto3 sign them), lets Swift's own s3api build
the string to sign from each, and prints, as JSON, the body Swift's s3token would POST to
/v3/s3tokens for it (s3token.py: access key, urlsafe base64 of the string to sign, signature).

Usage: s3-strings-to-sign.py <access key> <secret>   (run with the Python that has Swift)
"""
import base64
import hashlib
import json
import sys
from io import BytesIO
from urllib.parse import urlsplit

from botocore.auth import S3SigV4Auth, HmacV1Auth, S3SigV4QueryAuth, HmacV1QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from swift.common.swob import Request
from swift.common.middleware.s3api.s3request import get_request_class
from swift.common.middleware.s3api.utils import Config

access, secret = sys.argv[1], sys.argv[2]
creds = Credentials(access, secret)
HOST = 'localhost:8080'
out = []

def s3token_body(env):
    req = get_request_class(env, False)(env, conf=Config())
    details = req.environ['s3api.auth_details']
    sts = details['string_to_sign']
    if isinstance(sts, str):
        sts = sts.encode('utf-8')
    body = {'credentials': {'access': details['access_key'], 'token': base64.urlsafe_b64encode(sts).decode('ascii'),
                            'signature': details['signature']}}
    # s3api's own verdict with the right secret (what it decides when s3token caches secrets).
    return body, details['check_signature'](secret)

def to_env(aws):
    u = urlsplit(aws.url)
    headers = {k: v for k, v in aws.headers.items()}
    env = Request.blank(u.path, environ={'REQUEST_METHOD': aws.method, 'QUERY_STRING': u.query}, headers=headers).environ
    if aws.body:
        env['wsgi.input'] = BytesIO(aws.body)
        env['CONTENT_LENGTH'] = str(len(aws.body))
    return env

cases = [
    ('v4 header GET object', 'GET', '/bucket/puppy.jpg', {}, b'', 'v4'),
    # Metadata stays ASCII: botocore signs header values as UTF-8, s3api reads them as latin-1.
    ('v4 header PUT object with metadata', 'PUT', '/bucket/zo%C3%AB/report.txt', {'Content-Type': 'text/plain', 'x-amz-meta-owner': 'zoe'}, b'hello', 'v4'),
    ('v4 header list with query', 'GET', '/bucket?list-type=2&prefix=a%20b', {}, b'', 'v4'),
    ('v4 presigned GET', 'GET', '/bucket/puppy.jpg', {}, b'', 'v4q'),
    ('v2 header PUT with x-amz headers', 'PUT', '/bucket/photos/puppy.jpg', {'Content-Type': 'image/jpeg', 'x-amz-acl': 'private', 'x-amz-meta-a': 'b'}, b'data', 'v2'),
    ('v2 header GET ?acl', 'GET', '/bucket?acl', {}, b'', 'v2'),
    ('v2 presigned GET', 'GET', '/bucket/puppy.jpg', {}, b'', 'v2q'),
]
for name, method, path, headers, body, kind in cases:
    aws = AWSRequest(method=method, url=f'http://{HOST}{path}', headers=dict(headers), data=body)
    aws.headers['Host'] = HOST
    if kind == 'v4':
        aws.headers['X-Amz-Content-SHA256'] = hashlib.sha256(body).hexdigest()
        S3SigV4Auth(creds, 's3', 'us-east-1').add_auth(aws)
    elif kind == 'v4q':
        S3SigV4QueryAuth(creds, 's3', 'us-east-1', expires=3600).add_auth(aws)
    elif kind == 'v2':
        HmacV1Auth(creds).add_auth(aws)
    else:
        HmacV1QueryAuth(creds, expires=3600).add_auth(aws)
    body, s3api_accepts = s3token_body(to_env(aws.prepare()))
    out.append({'name': name, 'body': body, 's3apiAccepts': s3api_accepts})
print(json.dumps(out))
