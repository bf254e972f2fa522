"""The wire: the transport thread, the hub link, the write loop, TCP, the exit flush, the URL check."""
