#!/usr/bin/env python3
"""Writes tests/vectors/aws_msk_iam.json: AWS_MSK_IAM payloads from kafka-python 3's own
AWS_MSK_IAM client and MSK presigned OAUTHBEARER tokens from aws-msk-iam-sasl-signer-python,
for fixed credentials and a fixed clock, so tests/aws_msk_iam.rs can compare ksasl's bytes
with theirs. Needs kafka-python, botocore and aws-msk-iam-sasl-signer-python:

    python3 tests/vectors/gen_aws_msk.py > tests/vectors/aws_msk_iam.json
"""

import base64
import datetime
import json
import sys
from unittest import mock

import botocore.auth
import importlib.metadata
from aws_msk_iam_sasl_signer import MSKAuthTokenProvider
from botocore.credentials import Credentials
from kafka.net.sasl import msk

# 2026-12-03T12:34:56Z
WHEN = datetime.datetime(2026, 12, 3, 12, 34, 56, tzinfo=datetime.timezone.utc)
WHEN_MS = int(WHEN.timestamp() * 1000)
KEYS = [
    ("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None),
    ("ASIAEXAMPLE2", "s3cr3t/with+slashes=", "IQoJb3JpZ2luX2VjE//session+token/=="),
]
HOSTS = [
    ("b-1.demo.abc123.c2.kafka.us-east-1.amazonaws.com", "us-east-1"),
    ("127.0.0.1", "eu-west-3"),
]


class FixedDatetime(datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return WHEN if tz else WHEN.replace(tzinfo=None)

    @classmethod
    def utcnow(cls):
        return WHEN.replace(tzinfo=None)


def main() -> None:
    payloads = []
    tokens = []
    with mock.patch.object(msk.datetime, "datetime", FixedDatetime), mock.patch.object(
        botocore.auth.datetime, "datetime", FixedDatetime
    ):
        for access, secret, token in KEYS:
            for host, region in HOSTS:
                client = msk.AwsMskIamClient(host, access, secret, region, token)
                payloads.append({
                    "access_key_id": access, "secret_access_key": secret, "session_token": token,
                    "host": host, "region": region, "now_ms": WHEN_MS, "user_agent": "kafka-python",
                    "payload": client.first_message().decode(),
                })
            for region in sorted({r for _, r in HOSTS}):
                creds = Credentials(access, secret, token)
                value, expiry_ms = MSKAuthTokenProvider._MSKAuthTokenProvider__construct_auth_token(region, creds) \
                    if hasattr(MSKAuthTokenProvider, "_MSKAuthTokenProvider__construct_auth_token") \
                    else getattr(MSKAuthTokenProvider, "__construct_auth_token")(region, creds)
                url = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode()
                tokens.append({
                    "access_key_id": access, "secret_access_key": secret, "session_token": token,
                    "region": region, "now_ms": WHEN_MS,
                    "user_agent": f"aws-msk-iam-sasl-signer-python/{importlib.metadata.version('aws-msk-iam-sasl-signer-python')}",
                    "token": value, "url": url, "expiry_ms": expiry_ms,
                })
    json.dump({"source": "kafka-python " + importlib.metadata.version("kafka-python")
               + ", aws-msk-iam-sasl-signer-python " + importlib.metadata.version("aws-msk-iam-sasl-signer-python")
               + ", botocore " + importlib.metadata.version("botocore"),
               "payloads": payloads, "tokens": tokens}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
