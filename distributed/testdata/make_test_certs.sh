#!/bin/sh
# Writes the test-only TLS material of //distributed:grpc_worker_test: a CA,
# and a certificate it signed for 127.0.0.1 / localhost, used by every
# worker and master of the test (as a cluster shares one). Valid 100 years.
# Never use these keys for anything but tests.
set -e
cd "$(dirname "$0")"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 36500 \
  -subj "/CN=graphrun test CA" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout node.key -out node.csr \
  -subj "/CN=localhost" 2>/dev/null
printf "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n" > node.ext
openssl x509 -req -in node.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out node.pem \
  -days 36500 -extfile node.ext 2>/dev/null
# A second CA, for "a certificate from elsewhere is refused".
openssl req -x509 -newkey rsa:2048 -nodes -keyout other_ca.key -out other_ca.pem -days 36500 \
  -subj "/CN=another CA" 2>/dev/null
rm -f node.csr node.ext ca.srl ca.key other_ca.key
