"""What the thread-sharing tests (CPU and GPU plans) share: work started on several threads
at once."""

import threading

THREADS = 8


def in_threads(work, n=THREADS):
    """Runs work(i) on n threads started together; re-raises the first exception."""
    barrier = threading.Barrier(n)
    errors = []

    def run(i):
        try:
            barrier.wait()
            work(i)
        except BaseException as e:  # noqa: BLE001 -- handed to the main thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
