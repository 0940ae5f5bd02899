"""An HTTPS server on 127.0.0.1 whose certificate is self-signed (made at start with `cryptography`, which
moto depends on): a client that verifies certificates must refuse it.

Usage: python3 tls_server.py STATE_DIR
Writes its key and certificate into STATE_DIR, prints its port on the first line of stdout, then serves until
killed. Every request that gets through the handshake is answered 200 with an empty body, and counted:
GET /__requests answers the count (so a test sees that no request got through).
"""

import datetime
import ipaddress
import http.server
import ssl
import sys
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    key_path, certificate_path = folder / "key.pem", folder / "certificate.pem"
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    certificate_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    return key_path, certificate_path


class Handler(http.server.BaseHTTPRequestHandler):
    requests = 0

    def answer(self, body: bytes = b"") -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/__requests":
            self.answer(str(Handler.requests).encode())
            return
        Handler.requests += 1
        self.answer()

    def do_PUT(self) -> None:
        Handler.requests += 1
        self.answer()

    do_POST = do_PUT
    do_PATCH = do_PUT

    def log_message(self, *args) -> None:
        pass


def main() -> None:
    key, certificate = self_signed(Path(sys.argv[1]))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
