//! A request router: matchit maps paths to handlers, http carries the request.

fn main() {
    let mut router = matchit::Router::new();
    router.insert("/users/{id}", "user").expect("a valid route");
    let request = http::Request::get("/users/42").body(()).expect("a valid request");
    let matched = router.at(request.uri().path()).expect("a route matches");
    println!("{} id={}", matched.value, matched.params.get("id").unwrap_or("?"));
}
