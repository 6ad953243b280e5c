/// `temperature_batch` → `TemperatureBatch`.
pub fn pascal_case(s: &str) -> String {
    s.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut c = p.chars();
            c.next().map_or(String::new(), |f| {
                f.to_ascii_uppercase().to_string() + c.as_str()
            })
        })
        .collect()
}

/// `max_temperature` → `maxTemperature`.
pub fn camel_case(s: &str) -> String {
    let p = pascal_case(s);
    let mut c = p.chars();
    c.next().map_or(String::new(), |f| {
        f.to_ascii_lowercase().to_string() + c.as_str()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_snake_case() {
        assert_eq!(pascal_case("temperature_batch"), "TemperatureBatch");
        assert_eq!(camel_case("max_temperature"), "maxTemperature");
        assert_eq!(camel_case("x"), "x");
        assert_eq!(pascal_case("point_3d"), "Point3d");
    }
}
