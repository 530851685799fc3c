#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
"""A remote shell for test guests that have no sshd, as Open MPI's
launcher wants one (mpirun --mca plm_rsh_agent THIS).

  rexec.py --serve PORT      run, on the remote guest, each command a client
                             sends; until killed
  rexec.py HOST CMD...       as ssh does: CMD joined by spaces runs under
                             /bin/sh -c on HOST; its output comes back here,
                             its exit status is ours

A client that goes away takes its command's process group with it. Guests
talk to each other only over the QEMU link; nothing here is for anything
else.
"""
import os
import signal
import socket
import subprocess
import sys
import threading

PORT = int(os.environ.get('REXEC_PORT', '18999'))
TRAILER = b'\n@@rexec-exit '


def serve_one(conn):
    f = conn.makefile('rb')
    cmd = f.readline().decode().rstrip('\n')
    proc = subprocess.Popen(['/bin/sh', '-c', cmd], stdin=subprocess.DEVNULL,
                            stdout=conn.fileno(), stderr=conn.fileno(),
                            start_new_session=True)

    def watch():
        # EOF from the client: it was killed; so is its command.
        try:
            conn.recv(1)
        except OSError:
            pass
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    threading.Thread(target=watch, daemon=True).start()
    rc = proc.wait()
    try:
        conn.sendall(TRAILER + str(rc).encode() + b'\n')
        conn.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    conn.close()


def serve(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('0.0.0.0', port))
    s.listen(16)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve_one, args=(conn,), daemon=True).start()


def client(host, argv):
    s = socket.create_connection((host, PORT), timeout=30)
    s.settimeout(None)
    s.sendall(' '.join(argv).encode() + b'\n')
    data = b''
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
        # pass output on as it comes, holding back what may be the trailer
        cut = data.rfind(b'\n')
        if cut > 0 and TRAILER not in data:
            sys.stdout.buffer.write(data[:cut])
            sys.stdout.buffer.flush()
            data = data[cut:]
    out, sep, rc = data.rpartition(TRAILER)
    if not sep:
        sys.stdout.buffer.write(data)
        return 255
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()
    return int(rc.strip() or b'255')


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--serve':
        serve(int(sys.argv[2]))
        return 0
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    return client(sys.argv[1], sys.argv[2:])


if __name__ == '__main__':
    sys.exit(main())
