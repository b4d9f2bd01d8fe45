//! Mounts the app; everything else lives in the library.

fn main() {
    kandev_web::start();
}
