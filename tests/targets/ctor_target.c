/* A library whose constructor leaves a mark: it appends a line to the file named by
 * ACLCONFORM_TEST_CTOR_MARK.  verdict_attacks.py names it in a case's origin.target to show that
 * a case file cannot make the tool load a library (issue 57): loading runs a constructor before
 * any symbol is looked up.  With ACLCONFORM_TEST_CTOR_HANG set its constructor never returns. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void leave_mark(void)
{
    if (getenv("ACLCONFORM_TEST_CTOR_HANG")) /* a constructor that never returns */
        for (;;) pause();
    const char *p = getenv("ACLCONFORM_TEST_CTOR_MARK");
    if (!p) return;
    int fd = open(p, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0) return;
    ssize_t w = write(fd, "loaded\n", 7);
    (void)w;
    close(fd);
}

int ctor_target_present(void) { return 1; }
