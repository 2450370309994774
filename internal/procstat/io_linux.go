package procstat

import (
	"os"
	"syscall"
)

// syncAll writes every dirty page of the system back (sync(2)).
func syncAll() error {
	syscall.Sync()
	return nil
}

// deviceNumber returns the major and minor numbers of the device holding
// path (st_dev, decoded as glibc's major and minor do).
func deviceNumber(path string) (major, minor uint64, err error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, 0, err
	}
	dev := uint64(st.Dev)
	return (dev>>8)&0xfff | (dev>>32)&^0xfff, dev&0xff | (dev>>12)&^0xff, nil
}

// flock locks f, exclusive or shared, waiting for the lock (flock(2)); the
// lock goes with f's last close.
func flock(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		if err := syscall.Flock(int(f.Fd()), how); err != syscall.EINTR {
			return err
		}
	}
}
